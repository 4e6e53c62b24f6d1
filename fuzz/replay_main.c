/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * replay_main.c - runs a fuzz target over every file of a corpus directory (or over files
 * named on the command line), so `make check` replays each corpus, every crash ever found
 * included, under AddressSanitizer and UBSan with gcc. libFuzzer builds do not use this.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)) {
		fprintf(stderr, "%s: read failed\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0, errors = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			errors += replay_file(argv[i]) != 0;
			count++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *e;
		while (d && (e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
			errors += replay_file(path) != 0;
			count++;
		}
		if (d)
			closedir(d);
	}
	printf("replayed %d inputs, %d unreadable\n", count, errors);
	if (count == 0) {
		fprintf(stderr, "empty corpus\n");
		return 1;
	}
	return errors ? 1 : 0;
}
