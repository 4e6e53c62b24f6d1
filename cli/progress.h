/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * progress.h - progress lines for the CLI's slow steps (reading, symbolizing, summing stacks):
 * shown only on a terminal and only for a step that takes longer than a second. Not a logger.
 */
#ifndef HEAPTAP_CLI_PROGRESS_H
#define HEAPTAP_CLI_PROGRESS_H

/* Starts a step named what (NULL: ends the current one). When stderr is a tty and the step is
   still running after 1 s, "heaptap: <what>..." appears (from a SIGALRM handler, with
   SA_RESTART), and its end prints how long it took. Nothing at all when stderr is not a tty. */
void progress_step(const char *what);

#endif
