/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgroup.c - the memory cgroup of cgroup.h: located from /proc/self/cgroup (the v1 memory
 * controller's line, else the v2 "0::" line) and the mount of that hierarchy in
 * /proc/self/mountinfo; usage, effective limit and memory.events read with raw system calls.
 * No host malloc, no stdio.
 */
#include "cgroup.h"

#include <string.h>
#include <unistd.h>

#include "sys.h"

#define CG_PATH_MAX 1024

static int located = -1;          /* -1 not yet, else the version (0 none) */
static char cg_dir[CG_PATH_MAX];   /* the group's directory */
static size_t cg_mount_len;        /* length of its mount point prefix (ancestors stop there) */

int cgroup_parse_u64(const char **s, uint64_t *out)
{
	const char *p = *s;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return -1;
	uint64_t v = 0;
	while (*p >= '0' && *p <= '9') {
		uint64_t d = (uint64_t)(*p++ - '0');
		v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
	}
	*out = v;
	*s = p;
	return 0;
}

/* dir + "/" + leaf into buf. 0, or -1 when it does not fit. */
static int join(char *buf, size_t cap, const char *dir, size_t dlen, const char *leaf)
{
	size_t ll = strlen(leaf);
	if (dlen + 1 + ll + 1 > cap)
		return -1;
	memcpy(buf, dir, dlen);
	buf[dlen] = '/';
	memcpy(buf + dlen + 1, leaf, ll + 1);
	return 0;
}

/* Reads the file dir/leaf (dlen bytes of dir) into buf. Its length, or -1. */
static long read_leaf(const char *dir, size_t dlen, const char *leaf, char *buf, size_t cap)
{
	char path[CG_PATH_MAX + 64];
	if (join(path, sizeof path, dir, dlen, leaf) != 0)
		return -1;
	long n = sys_read_small(path, buf, cap);
	return n < 0 ? -1 : n;
}

static int has_leaf(const char *dir, const char *leaf)
{
	char path[CG_PATH_MAX + 64];
	return join(path, sizeof path, dir, strlen(dir), leaf) == 0 && access(path, R_OK) == 0;
}

/* Copies the next blank-separated field of *s (mountinfo escapes \ooo decoded) into out. */
static int next_field(const char **s, char *out, size_t cap)
{
	const char *p = *s;
	while (*p == ' ')
		p++;
	if (!*p || *p == '\n')
		return -1;
	size_t n = 0;
	while (*p && *p != ' ' && *p != '\n') {
		char c = *p++;
		if (c == '\\' && p[0] >= '0' && p[0] <= '3' && p[1] >= '0' && p[1] <= '7' &&
		    p[2] >= '0' && p[2] <= '7') {
			c = (char)((p[0] - '0') * 64 + (p[1] - '0') * 8 + (p[2] - '0'));
			p += 3;
		}
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = 0;
	*s = p;
	return 0;
}

/* 1 if the comma-separated list has the word w. */
static int list_has(const char *list, const char *w)
{
	size_t wl = strlen(w);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == wl && memcmp(p, w, wl) == 0)
			return 1;
		if (!e)
			break;
		p = e + 1;
	}
	return 0;
}

/* From /proc/self/cgroup: the group path of the v1 memory controller (version 1) or of the
   v2 hierarchy (version 2) into path. Returns the version, or 0. */
static int own_group(char *path, size_t cap)
{
	char buf[4096];
	if (sys_read_small("/proc/self/cgroup", buf, sizeof buf) <= 0)
		return 0;
	int found = 0;
	for (char *line = buf; *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *c1 = strchr(line, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (c2) {
			*c2 = 0;
			const char *ctrl = c1 + 1;
			if (ctrl[0] && list_has(ctrl, "memory")) {
				sys_strlcpy(path, c2 + 1, cap);
				return 1; /* the v1 controller wins in a hybrid layout */
			}
			if (!ctrl[0] && strncmp(line, "0:", 2) == 0) {
				sys_strlcpy(path, c2 + 1, cap);
				found = 2;
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return found;
}

/* Finds the mount of the hierarchy (version 1: fstype cgroup with the memory option; 2:
   cgroup2) and composes cg_dir for group path gpath. 0, or -1. */
static int compose_dir(int version, const char *gpath)
{
	static char *mbuf;
	static size_t mcap;
	long n = sys_read_file("/proc/self/mountinfo", &mbuf, &mcap);
	if (n <= 0)
		return -1;
	int rc = -1;
	for (const char *line = mbuf; *line && rc != 0;) {
		const char *nl = strchr(line, '\n');
		char f[5][CG_PATH_MAX];
		const char *s = line;
		int ok = 1;
		for (int i = 0; i < 5 && ok; i++)
			ok = next_field(&s, f[i], sizeof f[i]) == 0;
		const char *dash = ok ? strstr(s, " - ") : NULL;
		char fstype[64], source[64], opts[512];
		if (dash && (!nl || dash < nl)) {
			s = dash + 3;
			if (next_field(&s, fstype, sizeof fstype) == 0 &&
			    next_field(&s, source, sizeof source) == 0 &&
			    next_field(&s, opts, sizeof opts) == 0 &&
			    ((version == 2 && strcmp(fstype, "cgroup2") == 0) ||
			     (version == 1 && strcmp(fstype, "cgroup") == 0 && list_has(opts, "memory")))) {
				/* f[3] is the mount's root inside the hierarchy, f[4] its mount point */
				const char *root = f[3], *mnt = f[4];
				size_t rl = strlen(root);
				const char *rest = gpath;
				if (strcmp(root, "/") != 0) {
					if (strncmp(gpath, root, rl) == 0 && (gpath[rl] == '/' || !gpath[rl]))
						rest = gpath + rl;
					else
						rest = NULL; /* the group is outside this mount */
				}
				if (rest) {
					while (*rest == '/')
						rest++;
					size_t ml = strlen(mnt);
					if (ml + 1 + strlen(rest) + 1 <= sizeof cg_dir) {
						memcpy(cg_dir, mnt, ml + 1);
						cg_mount_len = ml;
						if (*rest) {
							cg_dir[ml] = '/';
							memcpy(cg_dir + ml + 1, rest, strlen(rest) + 1);
						}
						rc = 0;
					}
				}
			}
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	return rc;
}

int cgroup_locate(const char *dir_override)
{
	if (located >= 0)
		return located;
	located = 0;
	cg_dir[0] = 0;
	if (dir_override && dir_override[0]) {
		sys_strlcpy(cg_dir, dir_override, sizeof cg_dir);
		size_t n = strlen(cg_dir);
		while (n > 1 && cg_dir[n - 1] == '/')
			cg_dir[--n] = 0;
		/* the ancestors of a named group are not looked at */
		cg_mount_len = n;
		if (has_leaf(cg_dir, "memory.current"))
			located = 2;
		else if (has_leaf(cg_dir, "memory.usage_in_bytes"))
			located = 1;
	} else {
		char gpath[CG_PATH_MAX];
		int v = own_group(gpath, sizeof gpath);
		if (v && compose_dir(v, gpath) == 0)
			located = v;
		if (located == 2 && !has_leaf(cg_dir, "memory.current"))
			located = 0; /* a v2 hierarchy without the memory controller here */
		if (located == 1 && !has_leaf(cg_dir, "memory.usage_in_bytes"))
			located = 0;
	}
	if (!located)
		cg_dir[0] = 0;
	return located;
}

const char *cgroup_dir(void)
{
	return cg_dir;
}

void cgroup_forget(void)
{
	located = -1;
	cg_dir[0] = 0;
}

/* The number in dir/leaf; "max" (no limit) and unreadable files give 0. */
static uint64_t read_number(const char *dir, size_t dlen, const char *leaf)
{
	char buf[64];
	if (read_leaf(dir, dlen, leaf, buf, sizeof buf) <= 0)
		return 0;
	const char *s = buf;
	uint64_t v;
	return cgroup_parse_u64(&s, &v) == 0 ? v : 0;
}

uint64_t cgroup_usage(void)
{
	if (located == 2)
		return read_number(cg_dir, strlen(cg_dir), "memory.current");
	if (located == 1)
		return read_number(cg_dir, strlen(cg_dir), "memory.usage_in_bytes");
	return 0;
}

/* v1's "no limit" is LONG_MAX rounded down to a page; anything that large means none. */
static uint64_t v1_limit(uint64_t v)
{
	return v >= ((uint64_t)1 << 62) ? 0 : v;
}

uint64_t cgroup_limit(void)
{
	if (located == 1) {
		char buf[8192];
		if (read_leaf(cg_dir, strlen(cg_dir), "memory.stat", buf, sizeof buf) > 0) {
			const char *p = strstr(buf, "hierarchical_memory_limit ");
			uint64_t v;
			if (p) {
				p += sizeof "hierarchical_memory_limit " - 1;
				if (cgroup_parse_u64(&p, &v) == 0)
					return v1_limit(v);
			}
		}
		return v1_limit(read_number(cg_dir, strlen(cg_dir), "memory.limit_in_bytes"));
	}
	if (located != 2)
		return 0;
	uint64_t best = 0;
	size_t len = strlen(cg_dir);
	for (;;) {
		static const char *const leaves[] = {"memory.max", "memory.high"};
		for (int i = 0; i < 2; i++) {
			uint64_t v = read_number(cg_dir, len, leaves[i]);
			if (v && (!best || v < best))
				best = v;
		}
		if (len <= cg_mount_len)
			break;
		while (len > cg_mount_len && cg_dir[len - 1] != '/')
			len--;
		if (len > cg_mount_len)
			len--; /* drop the slash */
		if (len < cg_mount_len)
			break;
	}
	return best;
}

int cgroup_events(uint64_t *high, uint64_t *max)
{
	char buf[512];
	if (located != 2 || read_leaf(cg_dir, strlen(cg_dir), "memory.events", buf, sizeof buf) <= 0)
		return -1;
	*high = *max = 0;
	for (const char *p = buf; *p;) {
		const char *s;
		if (strncmp(p, "high ", 5) == 0) {
			s = p + 5;
			cgroup_parse_u64(&s, high);
		} else if (strncmp(p, "max ", 4) == 0) {
			s = p + 4;
			cgroup_parse_u64(&s, max);
		}
		const char *nl = strchr(p, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
	return 0;
}
