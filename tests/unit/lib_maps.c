/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_maps.c - unit test of the dump's memory map (lib/maps.c): the snapshot holds
 * /proc/self/maps verbatim, lists executable file mappings with the main program first and
 * GNU build IDs that match the ones in the files' notes, and keeps an object that was
 * dlopen'ed and dlclose'd as a synthetic maps line plus an unloaded=1 mapping.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/maps.h"
#include "check.h"

/* The build ID in the file's section headers (an independent reading of the ELF file). */
static size_t file_build_id(const char *path, uint8_t *out, size_t cap)
{
	static char buf[64 << 20];
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	if (n < (ssize_t)sizeof(Elf64_Ehdr))
		return 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)buf;
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const Elf64_Shdr *)(buf + eh->e_shoff + (size_t)i * eh->e_shentsize);
		if (sh->sh_type != SHT_NOTE)
			continue;
		size_t off = sh->sh_offset;
		while (off + sizeof(Elf64_Nhdr) <= sh->sh_offset + sh->sh_size) {
			const Elf64_Nhdr *nh = (const Elf64_Nhdr *)(buf + off);
			size_t name = off + sizeof *nh, desc = name + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(buf + name, "GNU", 4) == 0) {
				size_t k = nh->n_descsz < cap ? nh->n_descsz : cap;
				memcpy(out, buf + desc, k);
				return k;
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return 0;
}

int main(void)
{
	static struct maps_snapshot s;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	CHECK(n > 0);
	exe[n > 0 ? n : 0] = 0;

	CHECK(maps_snapshot_take(&s, exe) == 0);
	CHECK(s.len > 0 && s.n >= 2);
	/* the text is /proc/self/maps: every mapping line starts with a hex range */
	CHECK(strstr(s.text, exe) != NULL);
	CHECK(strstr(s.text, "[stack]") != NULL);
	/* main program first, executable, with the file's build ID */
	CHECK(strcmp(s.maps[0].path, exe) == 0);
	CHECK(strcmp(s.maps[0].perms, "r-xp") == 0 && s.maps[0].start < s.maps[0].limit);
	CHECK(s.maps[0].start <= (uint64_t)(uintptr_t)&main && (uint64_t)(uintptr_t)&main < s.maps[0].limit);
	uint8_t bid[64];
	size_t bl = file_build_id(exe, bid, sizeof bid);
	CHECK(bl == 20 && s.maps[0].build_id_len == bl && memcmp(s.maps[0].build_id, bid, bl) == 0);
	/* libc is there with its own build ID, and nothing is marked unloaded yet */
	int libc = -1;
	for (size_t i = 0; i < s.n; i++) {
		CHECK(!s.maps[i].unloaded);
		if (strstr(s.maps[i].path, "/libc.so.6"))
			libc = (int)i;
	}
	CHECK(libc > 0);
	if (libc > 0) {
		bl = file_build_id(s.maps[libc].path, bid, sizeof bid);
		CHECK(bl > 0 && s.maps[libc].build_id_len == bl && memcmp(s.maps[libc].build_id, bid, bl) == 0);
	}
	size_t before = s.n;

	/* an object opened and closed stays in the map of later snapshots */
	const char *lib = "/usr/lib/x86_64-linux-gnu/libelf.so.1";
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	CHECK(h != NULL);
	if (h) {
		CHECK(maps_snapshot_take(&s, exe) == 0);
		CHECK(s.n > before);
		struct maps_unload u;
		struct maps_remap r[8], r2[8];
		CHECK(maps_note_unload(h, &u) == 1 && u.nseg >= 1);
		uintptr_t fn = (uintptr_t)dlsym(h, "elf_version");
		CHECK(fn != 0);
		/* still loaded: nothing is recorded, nothing moves */
		CHECK(maps_commit_unload(&u, r, 8) == 0 && maps_unloaded_count() == 0);
		CHECK(dlclose(h) == 0);
		size_t nr = maps_commit_unload(&u, r, 8);
		size_t recorded = maps_unloaded_count();
		/* recorded once: the same segments keep their synthetic addresses */
		CHECK(maps_commit_unload(&u, r2, 8) == nr && memcmp(r, r2, nr * sizeof *r) == 0);
		CHECK(maps_unloaded_count() == recorded);
		CHECK(recorded >= 1 && nr == recorded);
		/* a frame of the object moves to where nothing can be mapped; others stay */
		uintptr_t moved = maps_remap_pc(fn, r, nr);
		CHECK(moved >= ((uintptr_t)1 << 62) && moved != fn);
		CHECK(maps_remap_pc((uintptr_t)&main, r, nr) == (uintptr_t)&main);
		CHECK(maps_snapshot_take(&s, exe) == 0);
		int found = 0, covered = 0;
		for (size_t i = 0; i < s.n; i++)
			if (s.maps[i].unloaded) {
				found++;
				CHECK(strcmp(s.maps[i].path, lib) == 0 || strstr(s.maps[i].path, "libelf"));
				/* at its synthetic place, never where it was */
				CHECK(s.maps[i].start >= ((uint64_t)1 << 62));
				if (moved >= s.maps[i].start && moved < s.maps[i].limit)
					covered++;
				bl = file_build_id(lib, bid, sizeof bid);
				CHECK(s.maps[i].build_id_len == bl && memcmp(s.maps[i].build_id, bid, bl) == 0);
			}
		CHECK(found == (int)recorded);
		CHECK(covered == 1); /* the moved frame falls in the synthetic mapping */
		/* the synthetic line, in the kernel's format, after the real ones */
		const char *syn = strstr(s.text, " 00:00 0                          /usr/lib/x86_64-linux-gnu/libelf.so.1\n");
		CHECK(syn != NULL);
		CHECK(strstr(s.text, "[stack]") < syn);
	}

	if (failures)
		fprintf(stderr, "lib_maps: %d failure(s)\n", failures);
	else
		printf("lib_maps: ok\n");
	return failures != 0;
}
