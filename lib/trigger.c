/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * trigger.c - the table of dump triggers (trigger.h). Data only.
 */
#include "trigger.h"

const struct trigger_info trigger_table[TRIG_COUNT] = {
	[TRIG_INTERVAL] = {'i', "interval", 1},
	[TRIG_GDUMP] = {'u', "gdump", 1},
	[TRIG_MANUAL] = {'m', "manual", 0},
	[TRIG_FINAL] = {'f', "final", 0},
	[TRIG_TIME] = {'t', "time", 1},
	[TRIG_SIGNAL] = {'s', "signal", 1},
	[TRIG_OOM] = {'o', "oom", 1},
	[TRIG_PEAK] = {'p', "peak", 0},
};
