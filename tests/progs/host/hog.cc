/* SPDX-License-Identifier: BSD-2-Clause */
// hog.cc - a C++ host for tests/e2e/host_cxx.sh: exceptions thrown and caught across frames,
// std containers (vector growth, map, string), threads, and one function keeping 64 MiB live.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

__attribute__((noinline)) std::vector<std::unique_ptr<char[]>> cxx_hog(int n)
{
	std::vector<std::unique_ptr<char[]>> v;
	for (int i = 0; i < n; i++)
		v.emplace_back(new char[1 << 20]());
	return v;
}

__attribute__((noinline)) int thrower(int i)
{
	if (i % 3 == 0)
		throw std::runtime_error("multiple of three: " + std::to_string(i));
	return i;
}

int main()
{
	auto kept = cxx_hog(64);
	int caught = 0;
	for (int i = 0; i < 3000; i++) {
		try {
			thrower(i);
		} catch (const std::exception &e) {
			caught += e.what()[0] == 'm';
		}
	}
	std::vector<std::thread> ts;
	std::vector<size_t> sizes(8);
	for (int t = 0; t < 8; t++)
		ts.emplace_back([t, &sizes] {
			std::map<int, std::string> m;
			for (int j = 0; j < 20000; j++)
				m[j] = std::string(20 + t, 'a');
			sizes[t] = m.size();
		});
	for (auto &t : ts)
		t.join();
	size_t s = 0;
	for (size_t x : sizes)
		s += x;
	std::printf("kept %zu caught %d map %zu\n", kept.size(), caught, s);
	// exit() rather than return: the 64 MiB stay live into the final dump (locals are not destroyed).
	std::fflush(stdout);
	std::exit(7);
}
