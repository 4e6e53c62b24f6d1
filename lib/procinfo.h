/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * procinfo.h - who this process is, for the labels of pushed profiles and for /metrics: the
 * program's name, the host name, the pid, the main executable's GNU build ID, the cgroup
 * (v2 path, or v1's memory controller) and the container ID found in it.
 *
 * Read once per process (and again in a forked child: the pid changes) into static buffers;
 * the strings stay valid. Not the memory map of dumps (maps.h). No host malloc; thread-safe
 * (pthread_once); not async-signal-safe.
 */
#ifndef HEAPTAP_LIB_PROCINFO_H
#define HEAPTAP_LIB_PROCINFO_H

struct procinfo {
	char program[256];       /* basename of /proc/self/exe ("" unknown) */
	char hostname[256];
	char pid[24];
	char build_id[129];      /* hex, "" when the executable has none */
	char cgroup[512];        /* the cgroup path ("/system.slice/x.scope"), "" unknown */
	char container_id[65];   /* 64 hex digits named in the cgroup path, "" none */
};

/* The process's facts (read on first use). */
const struct procinfo *procinfo_get(void);

/* Finds a container ID in a cgroup path: the last run of exactly 64 hex digits (Docker,
   containerd, CRI-O, Podman, Kubernetes name their cgroups by it). Copies it to out (65
   bytes) and returns 1, or returns 0. Exposed for tests. */
int procinfo_container_id(const char *cgroup, char out[65]);

/* In a fork child: the facts are read again on next use. */
void procinfo_fork_child(void);

#endif
