/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_glibc_compat.c - unit test of lib/glibc_compat.h, the header the Makefile force-includes
 * into libheaptap.so's objects so that it loads on glibc 2.17: its stat, lstat, fstat and
 * fstatat system calls fill struct stat as glibc's functions do (a file, a symlink, a
 * descriptor, a directory descriptor), and memfd_create keeps working where the kernel lacks
 * it: with memfd_create refused (ENOSYS, by a seccomp filter) the descriptor comes from
 * O_TMPFILE in /dev/shm, and with O_TMPFILE refused too from a uniquely named file removed at
 * once; each is readable and writable, close-on-exec as asked, and leaves no name behind. Not a
 * test of the symbol versions (tests/static/selfcontained.sh).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* glibc's own functions, taken before the header turns the names into its wrappers */
static int (*libc_stat)(const char *, struct stat *) = stat;
static int (*libc_lstat)(const char *, struct stat *) = lstat;
static int (*libc_fstat)(int, struct stat *) = fstat;
static int (*libc_fstatat)(int, const char *, struct stat *, int) = fstatat;

#include "../../lib/glibc_compat.h"
#include "check.h"

static int same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_mode == b->st_mode &&
	       a->st_nlink == b->st_nlink && a->st_uid == b->st_uid && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Names in /dev/shm starting with .heaptap- */
static int leftovers(void)
{
	int n = 0;
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += strncmp(e->d_name, ".heaptap-", 9) == 0;
	if (d)
		closedir(d);
	return n;
}

/* In a child: refuse memfd_create with ENOSYS, and (block_tmpfile) openat with O_TMPFILE with
   EOPNOTSUPP; then memfd_create through the header must still give a working descriptor.
   Exit status 0 when it does. */
static int child(int block_tmpfile)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_memfd_create, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, block_tmpfile ? __NR_openat : 0xffff, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, __O_TMPFILE, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EOPNOTSUPP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof f / sizeof f[0], f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0)
		return 77;
	if (syscall(SYS_memfd_create, "x", 0) != -1 || errno != ENOSYS)
		return 3; /* the filter does not work */
	int fd = memfd_create("heaptap-test", 1u /* MFD_CLOEXEC */);
	if (fd < 0)
		return 4;
	if (write(fd, "hello", 5) != 5 || pread(fd, (char[8]){ 0 }, 5, 0) != 5)
		return 5;
	if (!(fcntl(fd, F_GETFD) & FD_CLOEXEC))
		return 6;
	char link[64], target[256];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, target, sizeof target - 1);
	target[n < 0 ? 0 : n] = 0;
	/* O_TMPFILE's file never had a name ("/dev/shm/#<inode> (deleted)"); the other had ours,
	   removed */
	if (!strstr(target, "(deleted)") ||
	    !strstr(target, block_tmpfile ? "/dev/shm/.heaptap-" : "/dev/shm/#"))
		return 7;
	close(fd);
	return 0;
}

static int run_child(int block_tmpfile)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(child(block_tmpfile));
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

int main(void)
{
	char dir[] = "/tmp/heaptap-compat-XXXXXX";
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	char file[128], sym[128];
	snprintf(file, sizeof file, "%s/file", dir);
	snprintf(sym, sizeof sym, "%s/link", dir);
	FILE *f = fopen(file, "w");
	CHECK(f && fputs("twelve bytes", f) >= 0, "write %s", file);
	if (f)
		fclose(f);
	CHECK(symlink(file, sym) == 0, "symlink");

	struct stat a, b;
	CHECK(stat(sym, &a) == 0 && libc_stat(sym, &b) == 0 && same_stat(&a, &b) && a.st_size == 12,
	      "stat");
	CHECK(lstat(sym, &a) == 0 && libc_lstat(sym, &b) == 0 && same_stat(&a, &b) && S_ISLNK(a.st_mode),
	      "lstat");
	int fd = open(file, O_RDONLY);
	CHECK(fstat(fd, &a) == 0 && libc_fstat(fd, &b) == 0 && same_stat(&a, &b) && S_ISREG(a.st_mode),
	      "fstat");
	close(fd);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK(fstatat(dfd, "link", &a, AT_SYMLINK_NOFOLLOW) == 0 &&
	      libc_fstatat(dfd, "link", &b, AT_SYMLINK_NOFOLLOW) == 0 && same_stat(&a, &b) &&
	      S_ISLNK(a.st_mode), "fstatat");
	CHECK(fstatat(dfd, "missing", &a, 0) == -1 && errno == ENOENT, "fstatat errno");
	CHECK(stat("/nonexistent/x", &a) == -1 && errno == ENOENT, "stat errno");
	close(dfd);
	unlink(sym);
	unlink(file);
	rmdir(dir);

	/* memfd_create without the system call: O_TMPFILE, then a name removed at once */
	int before = leftovers();
	int rc = run_child(0);
	if (rc == 77) {
		printf("skip: no seccomp filters here\n");
		return 77;
	}
	CHECK(rc == 0, "memfd_create through O_TMPFILE: child exit %d", rc);
	rc = run_child(1);
	CHECK(rc == 0, "memfd_create through a removed /dev/shm name: child exit %d", rc);
	CHECK(leftovers() == before, "names left in /dev/shm");
	return check_finish("lib_glibc_compat");
}
