/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lockrank.c - the ranked mutexes of lockrank.h. With HEAPTAP_LOCKRANK defined (the unit and
 * sanitizer builds) each thread keeps the ranks it holds in its tstate and a lock taken out of
 * order aborts with a message; otherwise these are plain pthread mutex calls. No malloc.
 */
#include "lockrank.h"

#include <stdlib.h>
#include <unistd.h>

#include "../base/outbuf.h"
#include "tstate.h"

#ifdef HEAPTAP_LOCKRANK
static void check_order(const struct ranked_mutex *l)
{
	uint32_t held = tstate_tls.locks_held;
	/* any held rank >= this one is a violation: bits rank..31 */
	if ((held >> l->rank) == 0 && !(held & (1u << l->rank)))
		return;
	char msg[128];
	struct outbuf ob;
	outbuf_init(&ob, msg, sizeof msg, -1);
	outbuf_puts(&ob, "heaptap: lock order violated: taking rank ");
	outbuf_u64(&ob, l->rank);
	outbuf_puts(&ob, " while holding ranks mask 0x");
	outbuf_hex(&ob, held);
	outbuf_putc(&ob, '\n');
	(void)!write(2, msg, ob.len);
	abort();
}
#define NOTE_TAKEN(l) (tstate_tls.locks_held |= 1u << (l)->rank)
#define NOTE_RELEASED(l) (tstate_tls.locks_held &= ~(1u << (l)->rank))
#else
#define check_order(l) ((void)(l))
#define NOTE_TAKEN(l) ((void)(l))
#define NOTE_RELEASED(l) ((void)(l))
#endif

void lockrank_lock(struct ranked_mutex *l)
{
	check_order(l);
	pthread_mutex_lock(&l->m);
	NOTE_TAKEN(l);
}

int lockrank_trylock(struct ranked_mutex *l)
{
	check_order(l);
	int rc = pthread_mutex_trylock(&l->m);
	if (rc == 0)
		NOTE_TAKEN(l);
	return rc;
}

void lockrank_unlock(struct ranked_mutex *l)
{
	NOTE_RELEASED(l);
	pthread_mutex_unlock(&l->m);
}
