/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * truth_cxx.cc - the C++ known-truth program: non-inlined functions keep a known number of bytes
 * live through operator new (objects and arrays), std::vector growth and std::string, and one
 * function news and deletes everything (~0 live). It checks nothing; the tests compare a
 * profiler's report with the truth it writes.
 *
 * Usage: truth_cxx TRUTHFILE   (lines as in truth_sites.c; col=cum because the allocating frame
 * of a container is a library or template function below the site, so the site's own share is
 * its cumulative column)
 */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>
#include <string>
#include <vector>

#define NO_TAIL() __asm__ volatile("" ::: "memory")

namespace {

struct site {
	const char *name;
	unsigned long long req, usable;
	int nsizes;
	unsigned long long count[16], size[16];
};

site sites[8];
int nsites;

[[noreturn]] void die(const char *what)
{
	fprintf(stderr, "truth_cxx: %s failed\n", what);
	exit(3);
}

site *site_add(const char *name)
{
	site *s = &sites[nsites++];
	memset(s, 0, sizeof *s);
	s->name = name;
	return s;
}

void site_count(site *s, const void *p, unsigned long long size)
{
	s->req += size;
	s->usable += malloc_usable_size(const_cast<void *>(p));
	for (int i = 0; i < s->nsizes; i++)
		if (s->size[i] == size) {
			s->count[i]++;
			return;
		}
	if (s->nsizes == 16)
		die("site_count");
	s->size[s->nsizes] = size;
	s->count[s->nsizes++] = 1;
}

struct node {
	uint64_t key, value;
	node *left, *right;
	char pad[16];
};  // 48 bytes

const size_t N_NODES = 20000, N_ARRAYS = 6, N_VECTORS = 8, N_STRINGS = 2000;
node *nodes[N_NODES];
char *arrays[N_ARRAYS];
/* The containers live in static storage built with placement new and are never destroyed, so
   their buffers are still live when a profiler's final dump runs after static destructors. */
alignas(std::vector<uint64_t>) unsigned char vector_store[N_VECTORS][sizeof(std::vector<uint64_t>)];
alignas(std::string) unsigned char string_store[N_STRINGS][sizeof(std::string)];
std::vector<uint64_t> *vectors;
std::string *strings;

}  // namespace

__attribute__((noinline)) void cxx_new_objects()
{
	site *s = site_add("cxx_new_objects");
	for (size_t i = 0; i < N_NODES; i++) {
		nodes[i] = new node();
		NO_TAIL();
		site_count(s, nodes[i], sizeof(node));
	}
}

__attribute__((noinline)) void cxx_new_arrays()
{
	site *s = site_add("cxx_new_arrays");
	for (size_t i = 0; i < N_ARRAYS; i++) {
		arrays[i] = new char[1u << 20];
		NO_TAIL();
		arrays[i][0] = 1;
		site_count(s, arrays[i], 1u << 20);
	}
}

/* Growth by push_back: every intermediate buffer is freed, only the last capacity is live. */
__attribute__((noinline)) void cxx_vector_growth()
{
	site *s = site_add("cxx_vector_growth");
	for (size_t i = 0; i < N_VECTORS; i++) {
		for (uint64_t k = 0; k < 100000 + 1000 * i; k++)
			vectors[i].push_back(k);
		NO_TAIL();
		site_count(s, vectors[i].data(), vectors[i].capacity() * sizeof(uint64_t));
	}
}

__attribute__((noinline)) void cxx_strings()
{
	site *s = site_add("cxx_strings");
	for (size_t i = 0; i < N_STRINGS; i++) {
		strings[i].assign(1000 + i % 7, 'x');
		NO_TAIL();
		site_count(s, strings[i].data(), strings[i].capacity() + 1);
	}
}

__attribute__((noinline)) void cxx_churn()
{
	site_add("cxx_churn");
	for (int r = 0; r < 200; r++) {
		std::vector<std::string> tmp;
		for (int i = 0; i < 100; i++)
			tmp.emplace_back(500 + i, 'y');
		node *n = new node();
		NO_TAIL();
		delete n;
	}
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: truth_cxx TRUTHFILE\n");
		return 2;
	}
	for (size_t i = 0; i < N_VECTORS; i++)
		new (vector_store[i]) std::vector<uint64_t>();
	for (size_t i = 0; i < N_STRINGS; i++)
		new (string_store[i]) std::string();
	vectors = reinterpret_cast<std::vector<uint64_t> *>(vector_store);
	strings = reinterpret_cast<std::string *>(string_store);
	cxx_new_objects();
	NO_TAIL();
	cxx_new_arrays();
	NO_TAIL();
	cxx_vector_growth();
	NO_TAIL();
	cxx_strings();
	NO_TAIL();
	cxx_churn();
	NO_TAIL();
	FILE *f = fopen(argv[1], "w");
	if (!f)
		die("fopen");
	for (int i = 0; i < nsites; i++) {
		site *s = &sites[i];
		fprintf(f, "site %s req=%llu usable=%llu col=cum objs=", s->name, s->req, s->usable);
		if (s->nsizes == 0)
			fprintf(f, "0x0");
		for (int j = 0; j < s->nsizes; j++)
			fprintf(f, "%s%llux%llu", j ? "+" : "", s->count[j], s->size[j]);
		fputc('\n', f);
	}
	if (fclose(f) != 0)
		die("fclose");
	return 0;
}
