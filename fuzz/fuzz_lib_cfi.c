/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz_lib_cfi.c - fuzz target for the collector's DWARF call-frame reader (lib/cfi.c): the
 * .eh_frame_hdr binary search, CIE and FDE parsing and the call-frame instruction
 * interpreter, through cfi_rule_for. Input: a 4-byte offset of the .eh_frame_hdr and a 4-byte
 * offset of the pc (little-endian, both taken modulo the image size), then the image of a
 * loaded object. The image is copied into a buffer of exactly its size, so any read outside
 * the object is an AddressSanitizer error; the rule must have a defined kind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/cfi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8 + 12)
		return 0;
	uint32_t hdr_off, pc_off;
	memcpy(&hdr_off, data, 4);
	memcpy(&pc_off, data + 4, 4);
	size_t n = size - 8;
	uint8_t *image = malloc(n);
	if (!image)
		return 0;
	memcpy(image, data + 8, n);
	hdr_off %= (uint32_t)n;
	pc_off %= (uint32_t)n;
	uint64_t rule = cfi_rule_for(image + hdr_off, image, image + n, (uintptr_t)(image + pc_off));
	free(image);
	if ((rule & 3) == 0)
		abort(); /* every answer is step, outermost or cannot */
	return 0;
}
