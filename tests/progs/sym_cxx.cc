/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sym_cxx.cc - C++ names for tests/e2e/sym_cxx.sh: namespaces, a class template with a
 * non-type parameter, member and free operator overloads, a static member, an
 * anonymous-namespace function and a lambda, each allocating (so each holds a call site).
 * The test builds it at -O2 and checks the demangled names of those call sites.
 */
#include <cstdio>
#include <vector>

namespace shapes {
namespace detail {
template <typename T, int N> struct Pool {
	std::vector<T *> items;
	__attribute__((noinline)) Pool &operator+=(const T &v)
	{
		items.push_back(new T(v));
		return *this;
	}
	__attribute__((noinline)) static Pool *make() { return new Pool; }
};
} // namespace detail

struct Vec {
	double x, y;
};

__attribute__((noinline)) Vec *operator+(const Vec &a, const Vec &b)
{
	return new Vec{a.x + b.x, a.y + b.y};
}
} // namespace shapes

namespace {
__attribute__((noinline)) int *hidden(int n)
{
	int *p = new int[n];
	p[0] = n;
	return p;
}
} // namespace

int main(int argc, char **)
{
	auto *pool = shapes::detail::Pool<int, 3>::make();
	*pool += argc;
	shapes::Vec a{1, 2}, b{3, 4};
	shapes::Vec *c = a + b;
	auto lam = [](int n) __attribute__((noinline)) { return new long[n]; };
	long *l = lam(argc + 1);
	int *h = hidden(argc);
	std::printf("%zu %g %ld %d\n", pool->items.size(), c->x, l[0] = 1, h[0]);
	return 0;
}
