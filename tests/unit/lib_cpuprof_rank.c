/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_cpuprof_rank.c - unit test of the CPU profiler's lock order on the real paths (built with
 * -DHEAPTAP_LOCKRANK, as every unit test is, so an out-of-order lock aborts): with the run CPU
 * profile on, heap dumps under prof_prefix write the CPU profile beside them (the dump lock,
 * then the CPU sessions' lock) while the drain thread runs, a fork takes every collector lock
 * in the fork handlers' order (dump, CPU sessions, CPU thread table, tables, threads) and the
 * child dumps too; the statistics count the files written. Not a test of the profile's content
 * (tests/e2e/cpu_*.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../lib/cpuprof.h"
#include "../../lib/dump.h"
#include "../../lib/lifecycle.h"
#include "check.h"

static volatile unsigned long sink;

static void spin(long n)
{
	unsigned long s = sink;
	for (long i = 0; i < n; i++)
		s = s * 6364136223846793005ul + (unsigned long)i;
	sink = s;
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && st.st_size > 0;
}

int main(void)
{
	char dir[] = "/tmp/lib_cpuprof_rank.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char conf[512];
	snprintf(conf, sizeof conf, "prof_final:false,cpu_prof:true,cpu_hz:1000,cpu_prefix:%s/exit,prof_prefix:%s/h",
	         dir, dir);
	setenv("HEAPTAP_CONF", conf, 1);
	lifecycle_init();
	struct cpuprof_stats cs;
	cpuprof_get_stats(&cs);
	CHECK(cs.running);

	char name[512], path[600];
	for (int i = 0; i < 3; i++) {
		spin(20000000);
		CHECK(dump_named(TRIG_MANUAL, name, sizeof name) == 0);
		/* name ends in .heap: the CPU profile is beside it */
		size_t n = strlen(name);
		CHECK(n > 5 && strcmp(name + n - 5, ".heap") == 0);
		snprintf(path, sizeof path, "%.*s.cpu.pb", (int)(n - 5), name);
		CHECK(exists(path), "missing %s", path);
	}
	cpuprof_get_stats(&cs);
	CHECK(cs.written == 3 && cs.write_failed == 0, "written %llu failed %llu",
	      (unsigned long long)cs.written, (unsigned long long)cs.write_failed);
	CHECK(cs.sampler.taken > 0);

	pid_t pid = fork();
	if (pid == 0) {
		/* the child inherits no running profile: a dump writes nothing beside it */
		int rc = dump_named(TRIG_MANUAL, name, sizeof name);
		struct cpuprof_stats c2;
		cpuprof_get_stats(&c2);
		_exit(rc == 0 && !c2.running ? 0 : 1);
	}
	int st = 0;
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
	/* the parent goes on after the fork */
	CHECK(dump_named(TRIG_MANUAL, name, sizeof name) == 0);
	cpuprof_get_stats(&cs);
	CHECK(cs.written == 4, "written %llu", (unsigned long long)cs.written);
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	(void)!system(cmd);
	return check_finish("lib_cpuprof_rank");
}
