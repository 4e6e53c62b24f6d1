/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tstate.c - the definition of the per-thread state of tstate.h (initial-exec TLS). Nothing
 * else: every module that needs the calling thread's state reads it through tstate.h.
 */
#include "tstate.h"

__thread struct tstate tstate_tls __attribute__((tls_model("initial-exec")));
