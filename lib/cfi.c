/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cfi.c - the DWARF call-frame unwinder of cfi.h: finding a return address's FDE
 * (_dl_find_object where glibc has it, else dl_iterate_phdr, or in a signal handler a table of
 * the loaded objects refreshed outside it; then a binary search of
 * .eh_frame_hdr's sorted table), running the CIE's and FDE's call-frame instructions up to
 * that address to get the rule of its frame, a set-associative cache of rules with per-slot
 * sequence numbers, and the walk itself (through signal frames, and on by frame pointers
 * where a frame has no rule).
 *
 * Formats: DWARF 5 §6.4 (call frame information), the LSB's .eh_frame / .eh_frame_hdr
 * (pointer encodings DW_EH_PE_*, augmentations "zPLRS"), the x86-64 psABI's DWARF register
 * numbers (6 rbp, 7 rsp, 16 return address).
 */
#include "cfi.h"
#include "../base/bisect.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ucontext.h>

#include "sys.h"

/* glibc >= 2.35's _dl_find_object, found at run time by cfi_init's caller (not linked: the
   library must load on glibc 2.17, see docs/INTERNALS.md "Portability"); NULL before 2.35,
   then find_hdr asks dl_iterate_phdr. */
typedef int (*find_object_fn)(void *pc, struct dl_find_object *out);
static find_object_fn find_object;

enum { DW_RBP = 6, DW_RSP = 7, DW_RA = 16 };

/* ---- rules ---- */

/* A frame's rule, packed in 64 bits: kind, whether the CFA is rbp- or rsp-based, the CFA
   offset, and where the caller's rbp was saved (an offset from the CFA; 0 = not saved: the
   caller's rbp is this frame's). */
enum { RULE_NONE = 0, RULE_STEP = 1, RULE_LAST = 2, RULE_FAIL = 3 };

static uint64_t rule_pack(int kind, int cfa_rbp, int32_t cfa_off, int16_t rbp_off)
{
	return (uint64_t)kind | (uint64_t)(cfa_rbp ? 4 : 0) | ((uint64_t)(uint16_t)rbp_off << 16) |
	       ((uint64_t)(uint32_t)cfa_off << 32);
}

/* Flags beside the kind: bit 3, a signal frame (the CIE's 'S': the interrupted registers are
   in the ucontext at the frame's sp); bit 4, the CFA is loaded from the address the base and
   offset give, plus bits 8-15 (struct row's cfa_deref); bit 5, the caller's rbp is saved at
   the address in rbp (REG_AT_RBP). A rule with any of them takes the walk's slow branch. */
enum { RULE_SIGNAL = 8, RULE_DEREF = 16, RULE_RBP_AT = 32 };

static int rule_kind(uint64_t r) { return (int)(r & 3); }
static int rule_cfa_rbp(uint64_t r) { return (int)((r >> 2) & 1); }
static int16_t rule_rbp_off(uint64_t r) { return (int16_t)(uint16_t)(r >> 16); }
static int32_t rule_cfa_off(uint64_t r) { return (int32_t)(uint32_t)(r >> 32); }

/* ---- reading .eh_frame ---- */

/* A bounded reader: every read checks against end and sets bad instead of overrunning. */
struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_u(struct rd *r, unsigned n)
{
	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = 1;
		return 0;
	}
	uint64_t v = 0;
	memcpy(&v, r->p, n); /* little-endian host */
	r->p += n;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t rd_sleb(struct rd *r)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;
	do {
		if (r->bad || r->p >= r->end || shift > 63) {
			r->bad = 1;
			return 0;
		}
		b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A pointer in encoding enc (DW_EH_PE_*): absolute, pc-relative or relative to dbase. An
   indirect or unknown encoding sets bad. */
static uintptr_t rd_ptr(struct rd *r, uint8_t enc, uintptr_t dbase)
{
	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	uintptr_t at = (uintptr_t)r->p;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: v = rd_u(r, 8); break;                          /* absptr */
	case 0x01: v = rd_uleb(r); break;                          /* uleb128 */
	case 0x02: v = rd_u(r, 2); break;                          /* udata2 */
	case 0x03: v = rd_u(r, 4); break;                          /* udata4 */
	case 0x04: v = rd_u(r, 8); break;                          /* udata8 */
	case 0x09: v = (uint64_t)rd_sleb(r); break;                /* sleb128 */
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_u(r, 2); break; /* sdata2 */
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_u(r, 4); break; /* sdata4 */
	case 0x0c: v = rd_u(r, 8); break;                          /* sdata8 */
	default: r->bad = 1; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += at; break;    /* pcrel */
	case 0x30: v += dbase; break; /* datarel */
	default: r->bad = 1; return 0;
	}
	if (enc & 0x80) /* indirect: never used for the fields read here */
		r->bad = 1;
	return (uintptr_t)v;
}

/* The address range of a loaded object: every table, CIE and FDE read must lie inside it, so
   that a malformed .eh_frame (a hand-made binary, a broken linker) cannot send a read
   outside the object. */
struct span {
	uintptr_t lo, hi;
};

static int inside(const struct span *o, const void *p, uint64_t n)
{
	uintptr_t a = (uintptr_t)p;
	return a >= o->lo && a <= o->hi && n <= o->hi - a;
}

/* Register rules the walk cares about. */
/* REG_AT_RBP: saved at the address in rbp (DW_CFA_expression "DW_OP_breg6 0", GCC's stack
   realignment) */
enum { REG_SAME = 0, REG_OFFSET, REG_UNDEF, REG_OTHER, REG_AT_RBP };
struct regrule {
	uint8_t how;
	int64_t off;
};
struct row {
	unsigned cfa_reg; /* DWARF register number; ~0u when the CFA is an expression */
	int64_t cfa_off;
	struct regrule rbp, ra;
	/* the CFA expression "DW_OP_breg<cfa_reg> cfa_off; DW_OP_deref [; DW_OP_plus_uconst
	   cfa_add]" (GCC's realigned frames, OpenSSL's asm): CFA = *(reg + cfa_off) + cfa_add */
	int cfa_deref;
	uint64_t cfa_add;
};

/* The two DWARF expressions the walk evaluates (any other makes the rule "cannot"):
   "DW_OP_breg6/7 k; DW_OP_deref [; DW_OP_plus_uconst u]" as a CFA, "DW_OP_breg6 0" as where
   rbp was saved. */
static void cfa_expression(struct row *row, const uint8_t *p, uint64_t n)
{
	struct rd e = { p, p + n, 0 };
	uint8_t op = (uint8_t)rd_u(&e, 1);
	int64_t k = rd_sleb(&e);
	uint8_t deref = (uint8_t)rd_u(&e, 1);
	uint64_t add = 0;
	if (!e.bad && e.p < e.end) {
		if (rd_u(&e, 1) == 0x23) /* DW_OP_plus_uconst */
			add = rd_uleb(&e);
		else
			e.bad = 1;
	}
	row->cfa_reg = ~0u;
	row->cfa_deref = 0;
	if (e.bad || e.p != e.end || (op != 0x76 && op != 0x77) || deref != 0x06)
		return;
	row->cfa_reg = op == 0x76 ? DW_RBP : DW_RSP;
	row->cfa_off = k;
	row->cfa_deref = 1;
	row->cfa_add = add;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int signal, z;
	const uint8_t *insns, *end;
};

/* Parses the CIE at p (its length field), which must lie inside o. 0, or -1 when it is
   malformed or unsupported. */
static int parse_cie(const uint8_t *p, const struct span *o, struct cie *c)
{
	if (!inside(o, p, 12))
		return -1;
	struct rd r = { p, p + 12, 0 };
	uint64_t len = rd_u(&r, 4);
	if (len == 0 || len >= 0xfffffff0u || !inside(o, p, 4 + len))
		return -1;
	r.end = p + 4 + len;
	if (rd_u(&r, 4) != 0) /* CIE id */
		return -1;
	unsigned version = (unsigned)rd_u(&r, 1);
	if (version != 1 && version != 3)
		return -1;
	const char *aug = (const char *)r.p;
	size_t auglen = strnlen(aug, (size_t)(r.end - r.p));
	if (auglen == (size_t)(r.end - r.p))
		return -1;
	r.p += auglen + 1;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	uint64_t ra = version == 1 ? rd_u(&r, 1) : rd_uleb(&r);
	/* x86-64 uses 1 and -8; anything far from that is not a CIE we can use */
	if (ra != DW_RA || c->code_align == 0 || c->code_align > 64 || c->data_align < -64 ||
	    c->data_align > 64)
		return -1;
	c->fde_enc = 0; /* absptr */
	c->signal = 0;
	c->z = aug[0] == 'z';
	if (c->z) {
		uint64_t n = rd_uleb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return -1;
		const uint8_t *data_end = r.p + n;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R': c->fde_enc = (uint8_t)rd_u(&r, 1); break;
			case 'L': (void)rd_u(&r, 1); break;
			case 'P': {
				uint8_t enc = (uint8_t)rd_u(&r, 1);
				(void)rd_ptr(&r, (uint8_t)(enc & 0x7f), 0); /* skipped, not followed */
				break;
			}
			case 'S': c->signal = 1; break;
			case 'B': break;
			default: return -1; /* unknown: its data cannot be skipped safely */
			}
		}
		r.p = data_end;
	} else if (aug[0] != 0) {
		return -1;
	}
	if (r.bad || r.p > r.end)
		return -1;
	c->insns = r.p;
	c->end = r.end;
	return 0;
}

/* a * b, an offset scaled by the data alignment; an overflow marks the reader bad */
static int64_t scaled(struct rd *r, int64_t a, int64_t b)
{
	int64_t v;
	if (__builtin_mul_overflow(a, b, &v)) {
		r->bad = 1;
		return 0;
	}
	return v;
}

static void set_reg(struct row *row, uint64_t reg, uint8_t how, int64_t off)
{
	struct regrule *rr = reg == DW_RBP ? &row->rbp : reg == DW_RA ? &row->ra : NULL;
	if (rr) {
		rr->how = how;
		rr->off = off;
	}
}

/* DW_CFA_restore(_extended): register reg gets the CIE's rule back. */
static void restore_reg(struct row *row, const struct row *init, uint64_t reg)
{
	if (reg == DW_RBP)
		row->rbp = init->rbp;
	else if (reg == DW_RA)
		row->ra = init->ra;
}

/*
 * Runs call-frame instructions [p, end) from location loc, stopping before the first
 * advance past target. init is the CIE's row (for DW_CFA_restore). 0, or -1 on an unknown or
 * malformed instruction.
 */
static int run_cfa(struct row *row, const struct row *init, const struct cie *c,
                   const uint8_t *p, const uint8_t *end, uintptr_t loc, uintptr_t target)
{
	struct row saved[8];
	unsigned nsaved = 0;
	struct rd r = { p, end, 0 };
	while (r.p < r.end && !r.bad) {
		uint8_t op = (uint8_t)rd_u(&r, 1);
		uint64_t reg, delta = 0;
		switch (op >> 6) {
		case 1: /* advance_loc */
			delta = (op & 0x3f) * c->code_align;
			goto advance;
		case 2: /* offset */
			set_reg(row, op & 0x3f, REG_OFFSET, scaled(&r, (int64_t)rd_uleb(&r), c->data_align));
			continue;
		case 3: /* restore */
			restore_reg(row, init, op & 0x3f);
			continue;
		default: break;
		}
		switch (op) {
		case 0x00: continue; /* nop */
		case 0x01: /* set_loc */
			loc = rd_ptr(&r, c->fde_enc, 0);
			if (loc > target)
				return r.bad ? -1 : 0;
			continue;
		case 0x02: delta = rd_u(&r, 1) * c->code_align; goto advance;
		case 0x03: delta = rd_u(&r, 2) * c->code_align; goto advance;
		case 0x04: delta = rd_u(&r, 4) * c->code_align; goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(&r);
			set_reg(row, reg, REG_OFFSET, scaled(&r, (int64_t)rd_uleb(&r), c->data_align));
			continue;
		case 0x06: restore_reg(row, init, rd_uleb(&r)); continue; /* restore_extended */
		case 0x07: set_reg(row, rd_uleb(&r), REG_UNDEF, 0); continue;
		case 0x08: set_reg(row, rd_uleb(&r), REG_SAME, 0); continue;
		case 0x09: /* register */
		case 0x14: /* val_offset: both take a ULEB128 operand we do not follow */
			reg = rd_uleb(&r);
			(void)rd_uleb(&r);
			set_reg(row, reg, REG_OTHER, 0);
			continue;
		case 0x0a: /* remember_state */
			if (nsaved == sizeof saved / sizeof saved[0])
				return -1;
			saved[nsaved++] = *row;
			continue;
		case 0x0b: /* restore_state: the CFA rule too, as GCC's epilogues expect */
			if (nsaved == 0)
				return -1;
			*row = saved[--nsaved];
			continue;
		case 0x0c: /* def_cfa */
			row->cfa_reg = (unsigned)rd_uleb(&r);
			row->cfa_off = (int64_t)rd_uleb(&r);
			row->cfa_deref = 0;
			continue;
		case 0x0d: row->cfa_reg = (unsigned)rd_uleb(&r); row->cfa_deref = 0; continue;
		case 0x0e: /* def_cfa_offset: meaningless after an expression */
			row->cfa_off = (int64_t)rd_uleb(&r);
			if (row->cfa_deref)
				row->cfa_reg = ~0u;
			continue;
		case 0x0f: { /* def_cfa_expression */
			uint64_t n = rd_uleb(&r);
			if (r.bad || n > (uint64_t)(r.end - r.p))
				return -1;
			cfa_expression(row, r.p, n);
			r.p += n;
			continue;
		}
		case 0x10:   /* expression */
		case 0x16: { /* val_expression */
			reg = rd_uleb(&r);
			uint64_t n = rd_uleb(&r);
			if (r.bad || n > (uint64_t)(r.end - r.p))
				return -1;
			/* rbp saved at the address in rbp: "DW_OP_breg6 0" */
			int at_rbp = op == 0x10 && n == 2 && r.p[0] == 0x76 && r.p[1] == 0x00;
			r.p += n;
			set_reg(row, reg, at_rbp ? REG_AT_RBP : REG_OTHER, 0);
			continue;
		}
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(&r);
			set_reg(row, reg, REG_OFFSET, scaled(&r, rd_sleb(&r), c->data_align));
			continue;
		case 0x12: /* def_cfa_sf */
			row->cfa_reg = (unsigned)rd_uleb(&r);
			row->cfa_off = scaled(&r, rd_sleb(&r), c->data_align);
			row->cfa_deref = 0;
			continue;
		case 0x13: /* def_cfa_offset_sf */
			row->cfa_off = scaled(&r, rd_sleb(&r), c->data_align);
			if (row->cfa_deref)
				row->cfa_reg = ~0u;
			continue;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(&r);
			(void)rd_sleb(&r);
			set_reg(row, reg, REG_OTHER, 0);
			continue;
		case 0x2e: (void)rd_uleb(&r); continue; /* GNU_args_size */
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(&r);
			set_reg(row, reg, REG_OFFSET, scaled(&r, (int64_t)rd_uleb(&r), -c->data_align));
			continue;
		default: return -1;
		}
	advance:
		loc += delta;
		if (loc > target)
			return r.bad ? -1 : 0;
	}
	return r.bad ? -1 : 0;
}

struct phdr_find {
	uintptr_t pc;
	struct span o;
	const uint8_t *hdr;
	int found;
};

/* dl_iterate_phdr's callback: the object with a PT_LOAD segment holding pc, its load range
   and its PT_GNU_EH_FRAME. */
static int phdr_match(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct phdr_find *f = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const uint8_t *hdr = NULL;
	int holds = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			holds |= f->pc >= start && f->pc - start < ph->p_memsz;
			lo = start < lo ? start : lo;
			hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)start;
		}
	}
	if (!holds)
		return 0;
	f->o.lo = lo;
	f->o.hi = hi;
	f->hdr = hdr;
	f->found = 1;
	return 1;
}

/*
 * The loaded objects for signal handlers. dl_iterate_phdr takes the loader's lock and is not
 * async-signal-safe; before glibc 2.35 (no _dl_find_object) a walk from an interrupted context
 * (cfi_backtrace_context, the CPU profiler's handler) finds objects in this table instead: each
 * object's load range and .eh_frame_hdr, rebuilt outside any handler (cfi_objects_refresh, by
 * the CPU profiler's drain thread) when dl_iterate_phdr's dlpi_adds / dlpi_subs say objects
 * came or went, and read lock-free under a sequence number. A pc in no object of the table (a
 * dlopen newer than the last refresh) gets no rule: the walk steps that frame by its frame
 * pointer (counted: objtab_misses), and the missing rule is not cached.
 */
#define OBJTAB_MAX 1024
struct objent {
	uintptr_t lo, hi;
	const uint8_t *hdr;
};
static struct objent *objtab;        /* OBJTAB_MAX entries, mapped by the first refresh */
static uint32_t objtab_seq;          /* odd while the refresher writes */
static uint32_t objtab_n;
static unsigned long long objtab_adds, objtab_subs;
static int objtab_valid;             /* a refresh completed (its counters are meaningful) */
static int objtab_force;             /* tests: use the table even where _dl_find_object exists */
static int objtab_busy;              /* one refresher at a time */
static uint64_t n_objtab_misses;
/* set while this thread walks from an interrupted context: object look-ups use the table */
static __thread int in_context __attribute__((tls_model("initial-exec")));
/* set by a look-up that must not be cached (the table did not know the pc) */
static __thread int no_cache __attribute__((tls_model("initial-exec")));

struct objtab_fill {
	struct objent *out;
	uint32_t n;
	int first, changed;
};

static int objtab_collect(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct objtab_fill *f = arg;
	if (f->first) {
		f->first = 0;
		/* dlpi_adds and dlpi_subs: glibc 2.4 and later */
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs &&
		    __atomic_load_n(&objtab_valid, __ATOMIC_ACQUIRE) && info->dlpi_adds == objtab_adds &&
		    info->dlpi_subs == objtab_subs)
			return 1; /* nothing loaded or unloaded since the last refresh */
		f->changed = 1;
		if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
			objtab_adds = info->dlpi_adds;
			objtab_subs = info->dlpi_subs;
		}
	}
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	const uint8_t *hdr = NULL;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD) {
			lo = start < lo ? start : lo;
			hi = start + ph->p_memsz > hi ? start + ph->p_memsz : hi;
		} else if (ph->p_type == PT_GNU_EH_FRAME) {
			hdr = (const uint8_t *)start;
		}
	}
	if (lo < hi && f->n < OBJTAB_MAX)
		f->out[f->n++] = (struct objent){ lo, hi, hdr };
	return 0;
}

int cfi_objects_refresh(void)
{
	if (__atomic_load_n(&find_object, __ATOMIC_RELAXED) && !__atomic_load_n(&objtab_force, __ATOMIC_RELAXED))
		return 0; /* handlers use _dl_find_object, which is async-signal-safe */
	if (__atomic_exchange_n(&objtab_busy, 1, __ATOMIC_ACQUIRE))
		return 0;
	static struct objent *scratch;
	if (!objtab) {
		void *m = sys_map(2 * OBJTAB_MAX * sizeof(struct objent));
		if (!m) {
			__atomic_store_n(&objtab_busy, 0, __ATOMIC_RELEASE);
			return -ENOMEM;
		}
		scratch = (struct objent *)m + OBJTAB_MAX;
		__atomic_store_n(&objtab, (struct objent *)m, __ATOMIC_RELEASE);
	}
	struct objtab_fill f = { scratch, 0, 1, 0 };
	dl_iterate_phdr(objtab_collect, &f);
	if (f.changed) {
		/* publish: readers that overlap the copy see an odd or changed sequence number */
		uint32_t seq = __atomic_load_n(&objtab_seq, __ATOMIC_RELAXED);
		__atomic_store_n(&objtab_seq, seq + 1, __ATOMIC_RELEASE);
		for (uint32_t i = 0; i < f.n; i++) {
			__atomic_store_n(&objtab[i].lo, f.out[i].lo, __ATOMIC_RELEASE);
			__atomic_store_n(&objtab[i].hi, f.out[i].hi, __ATOMIC_RELEASE);
			__atomic_store_n(&objtab[i].hdr, f.out[i].hdr, __ATOMIC_RELEASE);
		}
		__atomic_store_n(&objtab_n, f.n, __ATOMIC_RELEASE);
		__atomic_store_n(&objtab_seq, seq + 2, __ATOMIC_RELEASE);
		__atomic_store_n(&objtab_valid, 1, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&objtab_busy, 0, __ATOMIC_RELEASE);
	return f.changed;
}

void cfi_objects_force(int on)
{
	__atomic_store_n(&objtab_force, on, __ATOMIC_RELEASE);
}

/* The table's object holding pc (async-signal-safe: loads only). 1 found, 0 not. */
static int objtab_find(uintptr_t pc, struct span *o, const uint8_t **hdr)
{
	struct objent *t = __atomic_load_n(&objtab, __ATOMIC_ACQUIRE);
	if (!t)
		return 0;
	uint32_t s1 = __atomic_load_n(&objtab_seq, __ATOMIC_ACQUIRE);
	if (s1 & 1)
		return 0;
	uint32_t n = __atomic_load_n(&objtab_n, __ATOMIC_ACQUIRE);
	int found = 0;
	for (uint32_t i = 0; i < n && i < OBJTAB_MAX; i++) {
		uintptr_t lo = __atomic_load_n(&t[i].lo, __ATOMIC_ACQUIRE);
		uintptr_t hi = __atomic_load_n(&t[i].hi, __ATOMIC_ACQUIRE);
		if (pc >= lo && pc < hi) {
			o->lo = lo;
			o->hi = hi;
			*hdr = __atomic_load_n(&t[i].hdr, __ATOMIC_ACQUIRE);
			found = 1;
			break;
		}
	}
	return found && __atomic_load_n(&objtab_seq, __ATOMIC_ACQUIRE) == s1;
}

/* The .eh_frame_hdr of the object holding pc (and the object's range in *o), or NULL. */
static const uint8_t *find_hdr(uintptr_t pc, struct span *o)
{
	const uint8_t *hdr;
	find_object_fn find = __atomic_load_n(&find_object, __ATOMIC_RELAXED);
	if (in_context && (!find || __atomic_load_n(&objtab_force, __ATOMIC_RELAXED))) {
		/* a signal handler's walk: never dl_iterate_phdr (the loader's lock) */
		if (!objtab_find(pc, o, &hdr)) {
			__atomic_fetch_add(&n_objtab_misses, 1, __ATOMIC_RELAXED);
			no_cache = 1;
			return NULL;
		}
	} else if (find) {
		struct dl_find_object dlfo;
		if (find((void *)pc, &dlfo) != 0)
			return NULL;
		o->lo = (uintptr_t)dlfo.dlfo_map_start;
		o->hi = (uintptr_t)dlfo.dlfo_map_end;
		hdr = dlfo.dlfo_eh_frame;
	} else {
		struct phdr_find f = { pc, { 0, 0 }, NULL, 0 };
		dl_iterate_phdr(phdr_match, &f);
		if (!f.found)
			return NULL;
		*o = f.o;
		hdr = f.hdr;
	}
	if (!hdr || !inside(o, hdr, 12))
		return NULL;
	return hdr;
}

/* A little-endian sdata4 at any alignment. */
static int32_t s32_at(const uint8_t *p)
{
	int32_t v;
	memcpy(&v, p, 4);
	return v;
}

/* The binary search table of .eh_frame_hdr: pairs of sdata4 (start, FDE) relative to hdr. */
struct hdr_table {
	const uint8_t *hdr, *tab;
};

/* bisect key: entry i's start address */
static uint64_t table_start(const void *ctx, size_t i)
{
	const struct hdr_table *t = ctx;
	return (uintptr_t)t->hdr + (intptr_t)s32_at(t->tab + 8 * i);
}

/* Binary search of .eh_frame_hdr's table (datarel sdata4 pairs): the FDE that may cover pc. */
static const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc, const struct span *o)
{
	if (hdr[0] != 1 || hdr[3] != 0x3b)
		return NULL;
	struct rd r = { hdr + 4, hdr + 20, 0 }; /* two pointers of at most 8 bytes */
	if ((uintptr_t)r.end > o->hi)
		r.end = (const uint8_t *)o->hi;
	(void)rd_ptr(&r, hdr[1], (uintptr_t)hdr); /* eh_frame_ptr */
	uint64_t count = rd_ptr(&r, hdr[2], (uintptr_t)hdr);
	if (r.bad || count == 0 || count > ((uint64_t)1 << 32) || !inside(o, r.p, count * 8))
		return NULL;
	const uint8_t *tab = r.p; /* count pairs of sdata4 (start, FDE), relative to hdr */
	struct hdr_table ht = {hdr, tab};
	size_t le = bisect_count_le((size_t)count, pc, table_start, &ht); /* entries starting <= pc */
	if (le == 0)
		return NULL;
	uint64_t lo = le - 1;
	const uint8_t *fde = hdr + (intptr_t)s32_at(tab + 8 * lo + 4);
	return inside(o, fde, 8) ? fde : NULL;
}

/* The rule of the frame executing at pc, from the .eh_frame_hdr at hdr of the object o. */
static uint64_t rule_from_hdr(const uint8_t *hdr, const struct span *so, uintptr_t pc)
{
	struct span o = *so;
	const uint8_t *fde = find_fde(hdr, pc, &o);
	if (!fde)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	struct rd r = { fde, fde + 8, 0 };
	uint64_t len = rd_u(&r, 4);
	if (len == 0 || len >= 0xfffffff0u || !inside(&o, fde, 4 + len))
		return rule_pack(RULE_FAIL, 0, 0, 0);
	const uint8_t *id_at = r.p;
	uint32_t cie_off = (uint32_t)rd_u(&r, 4);
	struct cie c;
	if (cie_off == 0 || (uintptr_t)id_at - o.lo < cie_off || parse_cie(id_at - cie_off, &o, &c) != 0)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	r.end = fde + 4 + len;
	uintptr_t begin = rd_ptr(&r, c.fde_enc, 0);
	uintptr_t range = rd_ptr(&r, (uint8_t)(c.fde_enc & 0x0f), 0);
	if (r.bad || pc < begin || pc - begin >= range)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	if (c.signal) /* glibc's __restore_rt: the walk reads the ucontext, not these rules */
		return rule_pack(RULE_STEP, 0, 8, 0) | RULE_SIGNAL;
	if (c.insns > c.end)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	/* 'z' augmentation data of the FDE (the LSDA pointer): skipped by its length */
	if (c.z) {
		uint64_t n = rd_uleb(&r);
		if (r.bad || n > (uint64_t)(r.end - r.p))
			return rule_pack(RULE_FAIL, 0, 0, 0);
		r.p += n;
	}
	struct row row = { DW_RSP, 8, { REG_SAME, 0 }, { REG_OFFSET, -8 }, 0, 0 };
	if (run_cfa(&row, &row, &c, c.insns, c.end, begin, (uintptr_t)-1) != 0)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	struct row init = row;
	if (run_cfa(&row, &init, &c, r.p, r.end, begin, pc) != 0)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	if (row.ra.how == REG_UNDEF)
		return rule_pack(RULE_LAST, 0, 0, 0);
	if ((row.cfa_reg != DW_RSP && row.cfa_reg != DW_RBP) || row.ra.how != REG_OFFSET ||
	    row.ra.off != -8 || row.cfa_off < (row.cfa_deref ? INT32_MIN : 8) ||
	    row.cfa_off > INT32_MAX || row.cfa_add > 255)
		return rule_pack(RULE_FAIL, 0, 0, 0);
	int16_t rbp_off = 0;
	uint64_t flags = row.cfa_deref ? RULE_DEREF | (row.cfa_add << 8) : 0;
	if (row.rbp.how == REG_OFFSET) {
		if (row.rbp.off == 0 || row.rbp.off < INT16_MIN || row.rbp.off > INT16_MAX)
			return rule_pack(RULE_FAIL, 0, 0, 0);
		rbp_off = (int16_t)row.rbp.off;
	} else if (row.rbp.how == REG_AT_RBP) {
		flags |= RULE_RBP_AT;
	} else if (row.rbp.how == REG_OTHER) {
		return rule_pack(RULE_FAIL, 0, 0, 0);
	}
	return rule_pack(RULE_STEP, row.cfa_reg == DW_RBP, (int32_t)row.cfa_off, rbp_off) | flags;
}

/* The rule of the frame executing at pc (a return address minus one, or an exact pc). */
static uint64_t compute_rule(uintptr_t pc)
{
	struct span o;
	const uint8_t *hdr = find_hdr(pc, &o);
	return hdr ? rule_from_hdr(hdr, &o, pc) : rule_pack(RULE_FAIL, 0, 0, 0);
}

uint64_t cfi_rule_for(const void *eh_frame_hdr, const void *lo, const void *hi, uintptr_t pc)
{
	struct span o = { (uintptr_t)lo, (uintptr_t)hi };
	if (!inside(&o, eh_frame_hdr, 12))
		return rule_pack(RULE_FAIL, 0, 0, 0);
	return rule_from_hdr(eh_frame_hdr, &o, pc);
}

/* ---- the rule cache ---- */

/* One slot: seq is odd while a writer fills it; gen must match the cache's generation. */
struct slot {
	uint32_t seq, gen;
	uintptr_t pc;
	uint64_t rule;
	uint64_t pad;
};

/*
 * 4-way set-associative: a return address may live in any of the 4 slots of its set (128
 * bytes, two cache lines), so a program's few thousand hot return addresses stay cached. A
 * direct-mapped cache of the same size thrashed where two hot addresses shared a slot: bash
 * made 2.2 M rule parses for 561 distinct return addresses (docs/INTERNALS.md "Unwinding cost").
 */
#define CACHE_SET_BITS 12
#define CACHE_WAYS 4
static struct slot *cache;
static uint32_t cache_gen = 1;
static int writing; /* one writer at a time; a busy writer's rule is simply not cached */
static uint8_t *victim; /* per set: the way the next miss replaces (round robin) */
/* shared counters, written per capture that stepped a frame by its frame pointer and per rule
   parse, never by a capture the cached rules answer (in a JIT-heavy host a fallback may be
   per sample: one atomic add) */
static uint64_t n_fallbacks, n_parses;

int cfi_init(void *dl_find_object)
{
	if (dl_find_object)
		__atomic_store_n(&find_object, (find_object_fn)dl_find_object, __ATOMIC_RELEASE);
	if (__atomic_load_n(&cache, __ATOMIC_ACQUIRE))
		return 0;
	size_t slots = (size_t)CACHE_WAYS << CACHE_SET_BITS;
	struct slot *s = sys_map(slots * sizeof(struct slot) + ((size_t)1 << CACHE_SET_BITS));
	if (!s)
		return -ENOMEM;
	victim = (uint8_t *)(s + slots);
	__atomic_store_n(&cache, s, __ATOMIC_RELEASE);
	return 0;
}

static size_t set_of(uintptr_t pc)
{
	return (size_t)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> (64 - CACHE_SET_BITS));
}

/* The rule of pc if slot s holds it for generation gen (seqlock read), else 0 (no valid rule
   is 0: its kind bits are 1..3). */
static inline __attribute__((always_inline)) uint64_t slot_read(const struct slot *s, uintptr_t pc, uint32_t gen)
{
	/* a seqlock without fences (ThreadSanitizer has none): acquire loads keep the second
	   read of seq after the fields, release stores keep the writer's fields after its odd seq;
	   on x86-64 all of them are plain moves */
	uint32_t s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	uintptr_t k = __atomic_load_n(&s->pc, __ATOMIC_ACQUIRE);
	uint64_t rule = __atomic_load_n(&s->rule, __ATOMIC_ACQUIRE);
	uint32_t g = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	uint32_t s2 = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
	return !(s1 & 1) && s1 == s2 && k == pc && g == gen ? rule : 0;
}

/* A miss of lookup: parses the rule and caches it. Out of line, so that the walks' loops
   keep only the probe. */
__attribute__((noinline)) static uint64_t lookup_miss(uintptr_t pc, uint32_t gen, size_t set)
{
	struct slot *ways = &cache[set * CACHE_WAYS];
	__atomic_fetch_add(&n_parses, 1, __ATOMIC_RELAXED);
	uint64_t rule = compute_rule(pc);
	if (no_cache) { /* the object table did not know pc: a refresh may, later */
		no_cache = 0;
		return rule;
	}
	if (__atomic_exchange_n(&writing, 1, __ATOMIC_ACQUIRE))
		return rule;
	/* a slot of an older generation first, else round robin */
	int w = 0;
	while (w < CACHE_WAYS && __atomic_load_n(&ways[w].gen, __ATOMIC_RELAXED) == gen)
		w++;
	if (w == CACHE_WAYS) {
		w = victim[set] % CACHE_WAYS;
		victim[set] = (uint8_t)(w + 1);
	}
	struct slot *s = &ways[w];
	/* from an even number, even if a writer died half-way (fork): readers must see an odd
	   number while we write */
	uint32_t seq = __atomic_load_n(&s->seq, __ATOMIC_RELAXED) & ~1u;
	__atomic_store_n(&s->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&s->pc, pc, __ATOMIC_RELEASE);
	__atomic_store_n(&s->rule, rule, __ATOMIC_RELEASE);
	__atomic_store_n(&s->gen, gen, __ATOMIC_RELEASE);
	__atomic_store_n(&s->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
	return rule;
}

static inline __attribute__((always_inline)) uint64_t lookup(uintptr_t pc, uint32_t gen)
{
	size_t set = set_of(pc);
	struct slot *ways = &cache[set * CACHE_WAYS];
	for (int w = 0; w < CACHE_WAYS; w++) {
		uint64_t r = slot_read(&ways[w], pc, gen);
		if (r)
			return r;
	}
	return lookup_miss(pc, gen, set);
}

void cfi_forget_all(void)
{
	__atomic_fetch_add(&cache_gen, 1, __ATOMIC_ACQ_REL);
}

void cfi_fork_child(void)
{
	__atomic_store_n(&writing, 0, __ATOMIC_RELEASE);
	/* a parent's thread may have been rebuilding the object table: rebuild it from scratch */
	if (__atomic_load_n(&objtab_busy, __ATOMIC_RELAXED)) {
		__atomic_store_n(&objtab_n, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&objtab_valid, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&objtab_seq, (__atomic_load_n(&objtab_seq, __ATOMIC_RELAXED) | 1) + 1, __ATOMIC_RELEASE);
		__atomic_store_n(&objtab_busy, 0, __ATOMIC_RELEASE);
	}
}

void cfi_get_counts(struct cfi_counts *out)
{
	out->fallbacks = __atomic_load_n(&n_fallbacks, __ATOMIC_RELAXED);
	out->parses = __atomic_load_n(&n_parses, __ATOMIC_RELAXED);
	out->objtab_misses = __atomic_load_n(&n_objtab_misses, __ATOMIC_RELAXED);
}

/* ---- the walk ---- */

/* out of line and named, so that tests/preload/perf_unwind_insns.sh can count its calls */
__attribute__((noinline, cold)) static uint32_t give_up(void)
{
	__atomic_fetch_add(&n_fallbacks, 1, __ATOMIC_RELAXED);
	return 0;
}

/* What a step needs of a frame: where it executes, its stack pointer after the call that made
   the next frame returned (its CFA from below), and rbp. */
struct regs {
	uintptr_t pc, sp, bp;
};

/*
 * Pages known mapped during one capture, for the reads that follow a guess. Until a frame is
 * stepped by its frame pointer every address the walk reads comes from a rule and lies on the
 * thread's stack. After a guess rbp may be any value, and [lo, hi) may hold unmapped pages
 * (a thread that switched to a stack of its own below the one it started on: coroutines,
 * fibers): each read outside the pages seen so far is first checked with mincore, a system
 * call and no descriptor (libunwind validated its reads through a pipe of its own). NULL in
 * the walk before any guess: no checks.
 */
struct okrange {
	uintptr_t lo, hi;
};

static int readable(struct okrange *ok, uintptr_t a, size_t n)
{
	if (!ok || (a >= ok->lo && n <= ok->hi - a && a < ok->hi))
		return 1;
	uintptr_t p0 = a & ~(uintptr_t)4095, p1 = (a + n + 4095) & ~(uintptr_t)4095;
	unsigned char vec[4];
	if (p1 <= p0 || p1 - p0 > sizeof vec * 4096 || mincore((void *)p0, p1 - p0, vec) != 0)
		return 0;
	if (ok->hi && p0 <= ok->hi && p1 >= ok->lo) { /* adjoins or overlaps: one range */
		ok->lo = p0 < ok->lo ? p0 : ok->lo;
		ok->hi = p1 > ok->hi ? p1 : ok->hi;
	} else {
		ok->lo = p0;
		ok->hi = p1;
	}
	return 1;
}

/* A frame without a rule (no unwind information: JIT code, hand-written asm, an object built
   without tables), or whose rule leaves the stack: steps by the frame pointer when rbp looks
   like one (at or above sp, inside the stack, aligned), the return address at rbp + 8 and the
   caller's rbp at rbp. A frame without a frame pointer leaves rbp to an older frame, and the
   step then skips the frames in between, as every unwinder without unwind information does;
   no read leaves [lo, hi) or the pages ok knows mapped. 0 when rbp cannot be a frame. */
__attribute__((noinline)) static int step_fp(struct regs *r, uintptr_t lo, uintptr_t hi, struct okrange *ok)
{
	uintptr_t bp = r->bp;
	if (bp < r->sp || bp < lo || hi < 16 || bp > hi - 16 || (bp & 7) || !readable(ok, bp, 16))
		return 0;
	const uintptr_t *f = (const uintptr_t *)bp;
	r->pc = f[1];
	r->bp = f[0];
	r->sp = bp + 16;
	return 1;
}

/* A signal frame (its return address is glibc's __restore_rt): the kernel's ucontext starts at
   the frame's CFA, r->sp; the interrupted pc, sp and rbp come from it. 0 when it does not lie
   inside [lo, hi) or the interrupted sp is not above it (a handler on an alternate stack). */
__attribute__((noinline)) static int step_signal(struct regs *r, uintptr_t lo, uintptr_t hi, struct okrange *ok)
{
	uintptr_t uc = r->sp;
	size_t need = offsetof(ucontext_t, uc_mcontext.gregs) + sizeof(greg_t) * NGREG;
	if (uc < lo || uc > hi || hi - uc < need || !readable(ok, uc, need))
		return 0;
	const greg_t *g = ((const ucontext_t *)uc)->uc_mcontext.gregs;
	uintptr_t sp = (uintptr_t)g[REG_RSP];
	if (sp <= uc || sp > hi)
		return 0;
	r->pc = (uintptr_t)g[REG_RIP];
	r->sp = sp;
	r->bp = (uintptr_t)g[REG_RBP];
	return 1;
}

/* A frame's step by its rule, CFA expressions and rbp saved at rbp (GCC's realigned frames)
   included: every read inside [lo, hi) and the pages ok knows mapped. 0 when something lies
   outside. The walk's fast branch does the plain rules inline. */
__attribute__((noinline)) static int step_rule(struct regs *r, uint64_t rule, uintptr_t lo, uintptr_t hi, struct okrange *ok)
{
	uintptr_t cfa = (rule_cfa_rbp(rule) ? r->bp : r->sp) + (uintptr_t)(intptr_t)rule_cfa_off(rule);
	if (rule & RULE_DEREF) {
		if (cfa < lo || hi < 8 || cfa > hi - 8 || (cfa & 7) || !readable(ok, cfa, 8))
			return 0;
		cfa = *(const uintptr_t *)cfa + ((rule >> 8) & 0xff);
	}
	if (cfa < r->sp + 8 || cfa > hi || cfa - 8 < lo || (cfa & 7) || !readable(ok, cfa - 8, 8))
		return 0;
	uintptr_t bp = r->bp;
	if (rule & RULE_RBP_AT) {
		if (bp < r->sp || bp < lo || bp > hi - 8 || (bp & 7) || !readable(ok, bp, 8))
			return 0;
		bp = *(const uintptr_t *)bp;
	} else if (rule_rbp_off(rule)) {
		uintptr_t at = cfa + (uintptr_t)(intptr_t)rule_rbp_off(rule);
		if (at < r->sp || at + 8 > hi || !readable(ok, at, 8))
			return 0;
		bp = *(const uintptr_t *)at;
	}
	r->pc = ((const uintptr_t *)cfa)[-1];
	r->sp = cfa;
	r->bp = bp;
	return 1;
}

/* The rest of a walk once a frame had to be stepped by its frame pointer (pcs[0..n) done, r
   the frame that has no usable rule): every read checked (struct okrange). Counted as a
   fallback. Returns the depth. */
__attribute__((noinline)) static uint32_t walk_guessing(uintptr_t *pcs, uint32_t n, uint32_t max,
                                                        uintptr_t pc, uintptr_t sp, uintptr_t bp,
                                                        uintptr_t lo, uintptr_t hi, uint32_t gen)
{
	(void)give_up();
	struct regs r = { pc, sp, bp };
	struct okrange ok = { 0, 0 };
	if (!step_fp(&r, lo, hi, &ok))
		return n;
	uintptr_t exact = 0;
	while (r.pc >= 4096 && n < max) {
		pcs[n++] = r.pc;
		if (n == max)
			break;
		uint64_t rule = lookup(r.pc - 1 + exact, gen);
		exact = 0;
		int kind = rule_kind(rule);
		if (kind == RULE_LAST)
			break;
		if (kind == RULE_STEP && (rule & RULE_SIGNAL)) {
			if (!step_signal(&r, lo, hi, &ok))
				break;
			exact = 1;
		} else if (!(kind == RULE_STEP && step_rule(&r, rule, lo, hi, &ok)) &&
		           !step_fp(&r, lo, hi, &ok)) {
			break;
		}
	}
	return n;
}

/* Built with frame pointers (the Makefile's flags for lib/), like the frame the caller names:
   a CFA at rbp + 16, the return address at rbp + 8 and the caller's rbp at rbp. */
/* The walk from frame state r (r.pc exact, not a return address, when exact is 1: a signal
   frame's or an interrupted context's). Inlined into both entries, so cfi_backtrace's
   instructions stay as they were. */
static inline __attribute__((always_inline)) uint32_t
walk_from(uintptr_t *pcs, uint32_t max, struct regs r, uintptr_t exact, uintptr_t stack_lo,
          uintptr_t stack_hi, uint32_t gen)
{
	uint32_t n = 0;
	for (;;) {
		pcs[n++] = r.pc;
		if (n == max)
			break;
		uint64_t rule = lookup(r.pc - 1 + exact, gen);
		exact = 0;
		if ((rule & (3 | RULE_SIGNAL | RULE_DEREF | RULE_RBP_AT)) != RULE_STEP) {
			int kind = rule_kind(rule);
			if (kind == RULE_LAST)
				break;
			if (kind == RULE_STEP && (rule & RULE_SIGNAL)) {
				if (!step_signal(&r, stack_lo, stack_hi, NULL))
					break;
				exact = 1;
			} else if (!(kind == RULE_STEP && step_rule(&r, rule, stack_lo, stack_hi, NULL))) {
				return walk_guessing(pcs, n, max, r.pc, r.sp, r.bp, stack_lo, stack_hi, gen);
			}
		} else {
			uintptr_t cfa = (rule_cfa_rbp(rule) ? r.bp : r.sp) +
			                (uintptr_t)(intptr_t)rule_cfa_off(rule);
			/* the CFA lies above this frame's sp and inside the stack, with room for the
			   return address below it and for the saved rbp wherever the rule puts it */
			int16_t rbp_off = rule_rbp_off(rule);
			uintptr_t at = cfa + (uintptr_t)(intptr_t)rbp_off;
			if (cfa < r.sp + 8 || cfa > stack_hi || cfa - 8 < stack_lo || (cfa & 7) ||
			    (rbp_off && (at < r.sp || at + 8 > stack_hi)))
				/* a rule that leaves the stack: try rbp before stopping */
				return walk_guessing(pcs, n, max, r.pc, r.sp, r.bp, stack_lo, stack_hi, gen);
			if (rbp_off)
				r.bp = *(const uintptr_t *)at;
			r.pc = ((const uintptr_t *)cfa)[-1];
			r.sp = cfa;
		}
		if (r.pc < 4096) /* the outermost frame's return address, when not marked undefined */
			break;
	}
	return n;
}

__attribute__((noinline, section("heaptap_text"))) uint32_t
cfi_backtrace(uintptr_t *pcs, uint32_t max, const void *start, uintptr_t stack_lo,
              uintptr_t stack_hi)
{
	if (!__atomic_load_n(&cache, __ATOMIC_ACQUIRE) || max == 0)
		return give_up();
	uint32_t gen = __atomic_load_n(&cache_gen, __ATOMIC_ACQUIRE);
	const uintptr_t *fp = __builtin_frame_address(0);
	if (start) {
		if ((uintptr_t)start < stack_lo || (uintptr_t)start + 16 > stack_hi)
			return give_up();
		fp = start;
	}
	struct regs r = { fp[1], (uintptr_t)(fp + 2), fp[0] };
	return walk_from(pcs, max, r, 0, stack_lo, stack_hi, gen);
}

uint32_t cfi_backtrace_context(uintptr_t *pcs, uint32_t max, uintptr_t pc, uintptr_t sp,
                               uintptr_t bp, uintptr_t stack_lo, uintptr_t stack_hi)
{
	if (!__atomic_load_n(&cache, __ATOMIC_ACQUIRE) || max == 0 || pc < 4096 || sp < stack_lo ||
	    sp >= stack_hi)
		return give_up();
	uint32_t gen = __atomic_load_n(&cache_gen, __ATOMIC_ACQUIRE);
	struct regs r = { pc, sp, bp };
	in_context = 1; /* rule misses find objects without dl_iterate_phdr (find_hdr) */
	uint32_t n = walk_from(pcs, max, r, 1, stack_lo, stack_hi, gen);
	in_context = 0;
	return n;
}
