/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * progress.c - the progress lines of progress.h.
 */
#include "progress.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* Progress: a one-shot timer; if a step is still running after 1 s, the SIGALRM handler writes
   its prepared line with write(2) (async-signal-safe), and the end of the step says how long it
   took. SA_RESTART keeps the interrupted system calls going. */
static char step_msg[256];
static size_t step_len;
static volatile sig_atomic_t step_shown;
static struct timespec step_ts;

static void on_alarm(int sig)
{
	(void)sig;
	if (step_len && write(2, step_msg, step_len) >= 0)
		step_shown = 1;
}

void progress_step(const char *what)
{
	static int tty = -1;
	if (tty < 0)
		tty = isatty(2);
	if (!tty)
		return;
	struct itimerval off = {{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &off, NULL);
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (step_len && step_shown) {
		double dt = (double)(now.tv_sec - step_ts.tv_sec) + (double)(now.tv_nsec - step_ts.tv_nsec) / 1e9;
		fprintf(stderr, "heaptap: %.*s took %.1f s\n", (int)(step_len > 13 ? step_len - 13 : 0),
		        step_msg + 9, dt);
	}
	step_len = 0;
	step_shown = 0;
	if (!what)
		return;
	int n = snprintf(step_msg, sizeof(step_msg), "heaptap: %s...\n", what);
	step_len = n > 0 && (size_t)n < sizeof(step_msg) ? (size_t)n : 0;
	step_ts = now;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval one = {{0, 0}, {1, 0}};
	setitimer(ITIMER_REAL, &one, NULL);
}
