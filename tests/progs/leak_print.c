/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * leak_print.c - a program for tests/preload/leak_error_exit.sh: writes 2000 numbered lines
 * and a last word without a newline to stdout, fully buffered in a static 64 KiB buffer (so all
 * of it is still in the buffer at exit, and the buffer is no allocation), leaks 4 MiB from
 * leak_site in 4 blocks, and returns 0 from main. Not a test by itself.
 */
#include <stdio.h>
#include <stdlib.h>

static void *leaked[4];
static char outbuf[65536];

__attribute__((noinline)) static void leak_site(void)
{
	for (int i = 0; i < 4; i++)
		leaked[i] = malloc(1 << 20);
	__asm__ volatile("" : : "r"(leaked) : "memory");
}

int main(void)
{
	setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
	for (int i = 0; i < 2000; i++)
		printf("line %d\n", i);
	leak_site();
	printf("end");
	return 0;
}
