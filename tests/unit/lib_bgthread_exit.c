/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_bgthread_exit.c - unit test of exit against the background thread's dumps: requests the
 * thread has already taken from the doorbell are written before exit's "final dump only"
 * (bgthread_drain waits for them), and a dump refused because the process is exiting is
 * counted as failed (ECANCELED) and said on stderr, not dropped without a trace.
 *
 * The thread is made to hold requests when exit comes: the test holds the dump lock while it
 * rings eight interval requests (the thread wakes, takes what is there and blocks on the
 * lock), lets go and at once does what at_exit does. Before the fix the requests in the
 * thread's hands were cancelled silently (preload/options_legacy_env lost every interval dump
 * of a short run at random).
 * Not a test of the dump files' content (tests/preload/collector_triggers.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../lib/bgthread.h"
#include "../../lib/doorbell.h"
#include "../../lib/dump.h"
#include "../../lib/lifecycle.h"
#include "check.h"

int main(void)
{
	char dir[] = "/tmp/lib_bgthread_exit.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char conf[512];
	snprintf(conf, sizeof conf, "prof_final:false,lg_prof_interval:30,prof_prefix:%s/h", dir);
	setenv("HEAPTAP_CONF", conf, 1);
	lifecycle_init(); /* lg_prof_interval: the background thread runs */

	/* The thread takes what was rung when it woke and blocks on the dump lock held here; the
	   test lets go and does at once what at_exit does, as a program that exits right after
	   its last allocations. */
	dump_lock();
	for (int i = 0; i < 8; i++)
		doorbell_ring(TRIG_INTERVAL);
	struct timespec ts = {0, 50 * 1000000};
	nanosleep(&ts, NULL);
	dump_unlock();

	/* at_exit's order */
	bgthread_drain();
	dump_set_exiting();
	struct dump_counts c;
	dump_get_counts(&c);
	CHECK(c.ok[TRIG_INTERVAL] == 8 && c.failed[TRIG_INTERVAL] == 0,
	      "interval dumps written %llu, failed %llu (of 8 requested before exit)",
	      (unsigned long long)c.ok[TRIG_INTERVAL], (unsigned long long)c.failed[TRIG_INTERVAL]);

	/* from now on a background dump is refused, counted, and said on stderr (once) */
	char errpath[600];
	snprintf(errpath, sizeof errpath, "%s/stderr", dir);
	int saved = dup(2), efd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(saved >= 0 && efd >= 0 && dup2(efd, 2) == 2);
	CHECK(dump_named(TRIG_INTERVAL, NULL, 0) == -ECANCELED);
	dup2(saved, 2);
	close(efd);
	close(saved);
	char line[256] = "";
	FILE *ef = fopen(errpath, "r");
	CHECK(ef && fgets(line, sizeof line, ef), "nothing said about the cancelled dump");
	if (ef)
		fclose(ef);
	CHECK(strstr(line, "heaptap: the interval dump asked for during exit was not written") == line,
	      "said: %s", line);
	dump_get_counts(&c);
	CHECK(c.failed[TRIG_INTERVAL] == 1 && c.last_errno == ECANCELED,
	      "a cancelled dump counts as failed (%llu, errno %d)",
	      (unsigned long long)c.failed[TRIG_INTERVAL], c.last_errno);
	CHECK(dump_named(TRIG_FINAL, NULL, 0) == 0, "the final dump is still written");

	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	CHECK(system(cmd) == 0);
	return check_finish("lib_bgthread_exit");
}
