/* SPDX-License-Identifier: BSD-2-Clause */
// cxx_alloc_sites.cc - C++ allocation sites with known live bytes, for
// tests/preload/cxx_allocators.sh: each noinline function keeps a fixed amount alive through
// one operator new variant, and churn() frees everything it allocates with sized and
// aligned deletes; huge() checks std::bad_alloc and nothrow NULL. Not a benchmark; prints a
// checksum so profiled and plain runs compare.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <new>

struct Obj48 { long v[6]; };
struct Pod24 { long v[3]; };
struct alignas(64) Al128 { char v[128]; };
struct Big200 { char v[200]; };

static void *keep[1000];
static int nkeep;
static int misaligned;
static void *volatile sink; // keeps the compiler from eliding new/delete pairs

static void hold(void *p, std::size_t align)
{
	if (reinterpret_cast<std::uintptr_t>(p) % align != 0)
		misaligned++;
	keep[nkeep++] = p;
}

// 100 x 48 = 4800 bytes through operator new
__attribute__((noinline)) void site_new() { for (int i = 0; i < 100; i++) hold(new Obj48(), 8); }
// 50 x 1000 = 50000 bytes through operator new[]
__attribute__((noinline)) void site_new_arr() { for (int i = 0; i < 50; i++) hold(new char[1000](), 1); }
// 30 x 24 = 720 bytes through nothrow operator new
__attribute__((noinline)) void site_nothrow() { for (int i = 0; i < 30; i++) hold(new (std::nothrow) Pod24(), 8); }
// 20 x 512 = 10240 bytes through nothrow operator new[]
__attribute__((noinline)) void site_nothrow_arr() { for (int i = 0; i < 20; i++) hold(new (std::nothrow) char[512](), 1); }
// 40 x 128 = 5120 bytes through aligned operator new
__attribute__((noinline)) void site_aligned() { for (int i = 0; i < 40; i++) hold(new Al128(), 64); }
// 10 x 384 = 3840 bytes through aligned operator new[]
__attribute__((noinline)) void site_aligned_arr() { for (int i = 0; i < 10; i++) hold(new Al128[3](), 64); }

// allocates and frees: nothing stays live here (sized and aligned deletes)
__attribute__((noinline)) long churn()
{
	long sum = 0;
	for (int i = 0; i < 2000; i++) {
		Big200 *b = new Big200();
		Al128 *a = new Al128();
		Al128 *v = new Al128[2]();
		sink = b;
		sink = a;
		sink = v;
		b->v[0] = (char)i;
		sum += b->v[0] + a->v[0] + v[1].v[0];
		delete b;
		delete a;
		delete[] v;
	}
	return sum;
}

// impossible requests: std::bad_alloc from the throwing forms, NULL from the nothrow ones
__attribute__((noinline)) int huge()
{
	volatile std::size_t n = (std::size_t)1 << 60;
	int failed = 0;
	for (int i = 0; i < 3; i++) {
		try {
			sink = new char[n];
		} catch (const std::bad_alloc &) {
			failed++;
		}
	}
	if (!(sink = new (std::nothrow) char[n]))
		failed++;
	return failed;
}

int main()
{
	int failed = huge();
	long sum = churn();
	site_new();
	site_new_arr();
	site_nothrow();
	site_nothrow_arr();
	site_aligned();
	site_aligned_arr();
	std::printf("sites=%d misaligned=%d sum=%ld huge_failed=%d\n", nkeep, misaligned, sum, failed);
	// with CXX_SITES_STATS set and heaptap loaded: its statistics JSON on stderr
	auto stats = reinterpret_cast<long (*)(char *, std::size_t)>(dlsym(RTLD_DEFAULT, "heaptap_stats_json"));
	if (std::getenv("CXX_SITES_STATS") && stats) {
		static char buf[65536];
		if (stats(buf, sizeof buf) > 0)
			std::fprintf(stderr, "%s\n", buf);
	}
	return misaligned ? 1 : 0;
}
