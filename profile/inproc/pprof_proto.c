/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pprof_proto.c - the mapping strings, Mapping and Location messages of pprof_proto.h.
 */
#include "pprof_proto.h"

#define MAX_BUILD_ID 64

void pprof_proto_mapping_strings(struct pbwrite *pb, const struct dump_mapping *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dump_mapping *m = &maps[i];
		pbwrite_string(pb, P_STRING, m->path ? m->path : "");
		char hex[2 * MAX_BUILD_ID + 1];
		size_t len = m->build_id ? m->build_id_len : 0;
		if (len > MAX_BUILD_ID)
			len = MAX_BUILD_ID;
		for (size_t k = 0; k < len; k++) {
			hex[2 * k] = "0123456789abcdef"[m->build_id[k] >> 4];
			hex[2 * k + 1] = "0123456789abcdef"[m->build_id[k] & 15];
		}
		pbwrite_bytes(pb, P_STRING, hex, 2 * len);
	}
}

void pprof_proto_mappings(struct pbwrite *pb, const struct dump_mapping *maps, size_t n,
                          uint64_t first_string)
{
	for (size_t i = 0; i < n; i++) {
		const struct dump_mapping *m = &maps[i];
		size_t mk = pbwrite_begin(pb, P_MAPPING);
		pbwrite_varint(pb, M_ID, i + 1);
		pbwrite_varint(pb, M_START, m->start);
		pbwrite_varint(pb, M_LIMIT, m->limit);
		pbwrite_varint(pb, M_OFFSET, m->offset);
		pbwrite_varint(pb, M_FILENAME, first_string + 2 * i);
		if (m->build_id && m->build_id_len > 0)
			pbwrite_varint(pb, M_BUILD_ID, first_string + 2 * i + 1);
		pbwrite_end(pb, mk);
	}
}

void pprof_proto_location(struct pbwrite *pb, uint64_t id, uint64_t addr,
                          const struct dump_mapping *maps, size_t n)
{
	size_t m = pbwrite_begin(pb, P_LOCATION);
	pbwrite_varint(pb, LOC_ID, id);
	for (size_t i = 0; i < n; i++) {
		if (addr >= maps[i].start && addr < maps[i].limit) {
			pbwrite_varint(pb, LOC_MAPPING_ID, i + 1);
			break;
		}
	}
	pbwrite_varint(pb, LOC_ADDRESS, addr);
	pbwrite_end(pb, m);
}
