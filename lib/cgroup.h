/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cgroup.h - the memory cgroup the process runs in: where it is (found once from
 * /proc/self/cgroup and /proc/self/mountinfo, or named by the mem_cgroup option), its usage,
 * its effective limit and, on cgroup v2, the memory.events counters.
 *
 * v2 reads memory.current, memory.max and memory.high (of the group and every ancestor up to
 * the mount: the smallest wins) and memory.events; v1 reads memory.usage_in_bytes and the
 * hierarchical_memory_limit line of memory.stat (else memory.limit_in_bytes). Raw system
 * calls into fixed buffers (the mount table into an mmap'd one): no host malloc. Not
 * async-signal-safe; call cgroup_locate from one thread before the others are used
 * concurrently (memacct.c does, under its once-flag). Not the policy that acts on the
 * figures (memwatch.h).
 */
#ifndef HEAPTAP_LIB_CGROUP_H
#define HEAPTAP_LIB_CGROUP_H

#include <stdint.h>

/* Finds the memory cgroup once (later calls return the first answer). dir_override, when
   not NULL nor "", names the group's directory instead (option mem_cgroup): v2 when it has
   memory.current, v1 when it has memory.usage_in_bytes. Returns 2 (v2), 1 (v1) or 0 (none). */
int cgroup_locate(const char *dir_override);

/* The directory found ("" when none). */
const char *cgroup_dir(void);

/* The group's memory usage in bytes, 0 when there is no group or it cannot be read. */
uint64_t cgroup_usage(void);

/* The group's effective limit in bytes (the smallest of max and high up the tree on v2;
   hierarchical_memory_limit on v1), 0 when none is set. */
uint64_t cgroup_limit(void);

/* v2 only: the "high" and "max" counters of memory.events. 0, or -1 when unavailable. */
int cgroup_events(uint64_t *high, uint64_t *max);

/* Parses an unsigned decimal at *s (skipping blanks), advancing *s. 0, or -1 when no digits. */
int cgroup_parse_u64(const char **s, uint64_t *out);

/* For tests: forget what cgroup_locate found. */
void cgroup_forget(void);

#endif
