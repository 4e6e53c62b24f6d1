/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_lib_options.c - fuzz target for the collector's HEAPTAP_CONF parser (lib/options.c).
 * The input, NUL-terminated, is parsed on top of the defaults; then every field must still be
 * within the range the rest of the collector relies on. Not a test of messages (those go
 * nowhere here: errfd -1).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char conf[1 << 17];
	if (size >= sizeof conf)
		size = sizeof conf - 1;
	memcpy(conf, data, size);
	conf[size] = 0;
	struct options o;
	options_init(&o);
	options_parse(&o, conf, -1);
	if (o.lg_prof_sample > 62 || o.lg_prof_interval < -1 || o.lg_prof_interval > 62 ||
	    o.prof_bt_max < 1 || o.prof_bt_max > 256 || o.prof_max_stacks > 4000000000u || o.prof_max_live > 4000000000u ||
	    o.prof_signal < 0 || o.prof_signal > 64 ||
	    memchr(o.prof_prefix, 0, sizeof o.prof_prefix) == NULL ||
	    memchr(o.http, 0, sizeof o.http) == NULL || memchr(o.http_token, 0, sizeof o.http_token) == NULL)
		abort();
	return 0;
}
