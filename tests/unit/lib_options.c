/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * lib_options.c - unit test of HEAPTAP_CONF parsing (lib/options.c): every key with good
 * values, number syntaxes, first-colon splitting, and the exact stderr line for bad keys
 * and values (captured through a pipe). Not a test of where options take effect.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/collector.h"
#include "../../lib/options.h"
#include "check.h"

/* Parses conf into o (after defaults) and captures the messages into msgs. */
static int parse(struct options *o, const char *conf, char *msgs, size_t cap)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	options_init(o);
	int n = options_parse(o, conf, fds[1]);
	close(fds[1]);
	ssize_t r = read(fds[0], msgs, cap - 1);
	msgs[r > 0 ? r : 0] = 0;
	close(fds[0]);
	return n;
}

int main(void)
{
	struct options o;
	char msgs[4096];

	/* defaults */
	options_init(&o);
	CHECK(o.prof == 1 && o.prof_active == 1 && o.lg_prof_sample == 19);
	CHECK(o.lg_prof_interval == -1 && o.prof_gdump == 0 && o.prof_gdump_rate_ms == 1000);
	CHECK(o.prof_final == 1 && o.prof_leak == 0 && o.prof_accum == 0);
	CHECK(strcmp(o.prof_prefix, "heaptap") == 0);
	CHECK(o.prof_time_interval_ms == 0 && o.prof_signal == 0 && o.prof_max_dumps == 0);
	CHECK(o.prof_format == DUMP_HEAPV2 && o.prof_unwind == UNWIND_DWARF);
	CHECK(o.prof_bt_max == 128 && o.prof_max_stacks == 0 && o.prof_max_live == 0);
	CHECK(o.http[0] == 0 && o.http_token[0] == 0 && o.verbose == 0);

	/* every key, good values */
	CHECK(parse(&o,
	            "prof:false,prof_active:false,lg_prof_sample:0,lg_prof_interval:30,"
	            "prof_gdump:true,prof_gdump_rate_ms:250,prof_final:false,prof_leak:true,"
	            "prof_accum:true,prof_prefix:/tmp/x/y,prof_time_interval:1500ms,"
	            "prof_signal:USR2,prof_max_dumps:7,prof_format:heap_v2+pprof,prof_unwind:fp,"
	            "prof_bt_max:256,prof_max_stacks:1000,prof_max_live:2000,"
	            "http:127.0.0.1:6060,http_token:s3cr:et,verbose:true",
	            msgs, sizeof msgs) == 0);
	CHECK(msgs[0] == 0);
	CHECK(o.prof == 0 && o.prof_active == 0 && o.lg_prof_sample == 0);
	CHECK(o.lg_prof_interval == 30 && o.prof_gdump == 1 && o.prof_gdump_rate_ms == 250);
	CHECK(o.prof_final == 0 && o.prof_leak == 1 && o.prof_accum == 1);
	CHECK(strcmp(o.prof_prefix, "/tmp/x/y") == 0);
	CHECK(o.prof_time_interval_ms == 1500 && o.prof_signal == SIGUSR2 && o.prof_max_dumps == 7);
	CHECK(o.prof_format == (DUMP_HEAPV2 | DUMP_PPROF) && o.prof_unwind == UNWIND_FP);
	CHECK(o.prof_bt_max == 256 && o.prof_max_stacks == 1000 && o.prof_max_live == 2000);
	/* split on the FIRST colon: values keep theirs */
	CHECK(strcmp(o.http, "127.0.0.1:6060") == 0);
	CHECK(strcmp(o.http_token, "s3cr:et") == 0);
	CHECK(o.verbose == 1);

	/* prof_leak_error implies prof_leak */
	CHECK(parse(&o, "prof_leak_error:true", msgs, sizeof msgs) == 0);
	CHECK(o.prof_leak_error == 1 && o.prof_leak == 1);

	/* integers: hex, octal; durations; signals */
	CHECK(parse(&o, "lg_prof_sample:0x10,prof_max_dumps:010,prof_time_interval:2", msgs, sizeof msgs) == 0);
	CHECK(o.lg_prof_sample == 16 && o.prof_max_dumps == 8 && o.prof_time_interval_ms == 2000);
	CHECK(parse(&o, "prof_time_interval:3m,prof_signal:SIGUSR1", msgs, sizeof msgs) == 0);
	CHECK(o.prof_time_interval_ms == 180000 && o.prof_signal == SIGUSR1);
	CHECK(parse(&o, "prof_time_interval:1h,prof_signal:12,prof_format:pprof", msgs, sizeof msgs) == 0);
	CHECK(o.prof_time_interval_ms == 3600000 && o.prof_signal == 12 && o.prof_format == DUMP_PPROF);
	CHECK(parse(&o, "prof_time_interval:5s,prof_signal:USR1", msgs, sizeof msgs) == 0);
	CHECK(o.prof_time_interval_ms == 5000 && o.prof_signal == SIGUSR1);
	/* empty prefix disables automatic dumps; empty items are skipped */
	CHECK(parse(&o, "prof_prefix:,,lg_prof_interval:-1", msgs, sizeof msgs) == 0);
	CHECK(o.prof_prefix[0] == 0 && o.lg_prof_interval == -1);

	/* unknown key: exact message, the rest still applies */
	CHECK(parse(&o, "xyz:1,lg_prof_sample:3", msgs, sizeof msgs) == 1);
	CHECK(strcmp(msgs, "heaptap: HEAPTAP_CONF: unknown option 'xyz' (ignored)\n") == 0);
	CHECK(o.lg_prof_sample == 3);

	/* bad values keep the previous value and say so */
	CHECK(parse(&o, "lg_prof_sample:abc", msgs, sizeof msgs) == 1);
	CHECK(strcmp(msgs, "heaptap: HEAPTAP_CONF: invalid value 'abc' for lg_prof_sample "
	                   "(expected 0..62; using 19)\n") == 0);
	CHECK(o.lg_prof_sample == 19);
	CHECK(parse(&o, "lg_prof_sample:63", msgs, sizeof msgs) == 1 && o.lg_prof_sample == 19);
	CHECK(parse(&o, "prof:yes", msgs, sizeof msgs) == 1 && o.prof == 1);
	CHECK(strstr(msgs, "invalid value 'yes' for prof (expected true or false; using true)") != NULL);
	CHECK(parse(&o, "lg_prof_interval:-2", msgs, sizeof msgs) == 1 && o.lg_prof_interval == -1);
	CHECK(parse(&o, "prof_bt_max:0", msgs, sizeof msgs) == 1 && o.prof_bt_max == 128);
	CHECK(parse(&o, "prof_bt_max:257", msgs, sizeof msgs) == 1 && o.prof_bt_max == 128);
	CHECK(parse(&o, "prof_max_stacks:5000000000", msgs, sizeof msgs) == 1 && o.prof_max_stacks == 0);
	CHECK(parse(&o, "prof_max_stacks:100000", msgs, sizeof msgs) == 0 && o.prof_max_stacks == 100000);
	o.prof_max_stacks = 0;
	CHECK(parse(&o, "prof_max_live:12x", msgs, sizeof msgs) == 1 && o.prof_max_live == 0);
	CHECK(parse(&o, "prof_format:json", msgs, sizeof msgs) == 1 && o.prof_format == DUMP_HEAPV2);
	CHECK(parse(&o, "prof_unwind:magic", msgs, sizeof msgs) == 1 && o.prof_unwind == UNWIND_DWARF);
	/* libunwind is no longer linked: the old name is an accepted alias of the DWARF walk */
	CHECK(parse(&o, "prof_unwind:fp,prof_unwind:libunwind", msgs, sizeof msgs) == 0 &&
	      o.prof_unwind == UNWIND_DWARF && strcmp(options_unwind_name(o.prof_unwind), "dwarf") == 0);
	CHECK(parse(&o, "prof_signal:KILL", msgs, sizeof msgs) == 1 && o.prof_signal == 0);
	CHECK(parse(&o, "prof_signal:9", msgs, sizeof msgs) == 1 && o.prof_signal == 0);
	CHECK(parse(&o, "prof_time_interval:5x", msgs, sizeof msgs) == 1 && o.prof_time_interval_ms == 0);
	CHECK(parse(&o, "prof_gdump_rate_ms:-5", msgs, sizeof msgs) == 1 && o.prof_gdump_rate_ms == 1000);
	CHECK(parse(&o, "lg_prof_sample:99999999999999999999999", msgs, sizeof msgs) == 1);
	CHECK(parse(&o, "prof_max_dumps:08", msgs, sizeof msgs) == 1); /* 8 is not octal */
	CHECK(parse(&o, "prof", msgs, sizeof msgs) == 1);
	CHECK(strcmp(msgs, "heaptap: HEAPTAP_CONF: malformed option 'prof' (expected key:value; ignored)\n") == 0);

	/* several problems: one line each */
	CHECK(parse(&o, "a:1,b:2,prof_accum:maybe", msgs, sizeof msgs) == 3);
	int lines = 0;
	for (const char *p = msgs; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 3);

	/* a long prefix is refused rather than truncated */
	char conf[1200];
	strcpy(conf, "prof_prefix:");
	memset(conf + 12, 'a', 600);
	conf[612] = 0;
	CHECK(parse(&o, conf, msgs, sizeof msgs) == 1 && strcmp(o.prof_prefix, "heaptap") == 0);

	/* errfd < 0: silent but counted */
	options_init(&o);
	CHECK(options_parse(&o, "nope:1", -1) == 1);
	CHECK(options_parse(&o, NULL, -1) == 0 && options_parse(&o, "", -1) == 0);

	/* the control plane's admission: users, Host names, the dump rate */
	options_init(&o);
	CHECK(o.http_allow_any == 0 && o.http_allow_nuids == 0 && o.http_hosts[0] == 0 && o.http_dump_rate_ms == 1000);
	CHECK(parse(&o, "http_allow_users:1000+1001,http_hosts:box.example+box,http_dump_rate_ms:0", msgs, sizeof msgs) == 0);
	CHECK(o.http_allow_any == 0 && o.http_allow_nuids == 2 && o.http_allow_uids[0] == 1000 && o.http_allow_uids[1] == 1001);
	CHECK(strcmp(o.http_hosts, "box.example+box") == 0 && o.http_dump_rate_ms == 0);
	CHECK(parse(&o, "http_allow_users:any", msgs, sizeof msgs) == 0 && o.http_allow_any == 1 && o.http_allow_nuids == 0);
	CHECK(parse(&o, "http_allow_users:owner", msgs, sizeof msgs) == 0 && o.http_allow_any == 0);
	/* bad lists are refused whole (the default, owner, stays) */
	CHECK(parse(&o, "http_allow_users:1000+", msgs, sizeof msgs) == 1 && strstr(msgs, "http_allow_users"));
	CHECK(parse(&o, "http_allow_users:nobody", msgs, sizeof msgs) == 1 && o.http_allow_nuids == 0);
	CHECK(parse(&o, "http_allow_users:4294967295", msgs, sizeof msgs) == 1);
	CHECK(parse(&o, "http_allow_users:1+2+3+4+5+6+7+8+9+10+11+12+13+14+15+16", msgs, sizeof msgs) == 0 &&
	      o.http_allow_nuids == 16 && o.http_allow_uids[15] == 16);
	CHECK(parse(&o, "http_allow_users:1+2+3+4+5+6+7+8+9+10+11+12+13+14+15+16+17", msgs, sizeof msgs) == 1 &&
	      o.http_allow_nuids == 0);

	if (failures)
		fprintf(stderr, "lib_options: %d failure(s)\n", failures);
	else
		printf("lib_options: ok\n");
	return failures != 0;
}
