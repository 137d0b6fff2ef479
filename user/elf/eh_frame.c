// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/eh_frame.h"
#include "util/array.h"
#include "util/sorted.h"

/* DWARF pointer encodings (the LSB's DW_EH_PE_*): format in the low nibble, base above. */
#define PE_OMIT		0xff
#define PE_FORMAT	0x0f
#define PE_APPLY	0x70
#define PE_ABSPTR	0x00
#define PE_PCREL	0x10

/* A cursor over one record; end bounds every read. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t read_fixed(struct cur *c, size_t n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);	/* x86-64 is little-endian; so is the section */
	c->p += n;
	return v;
}

static uint64_t read_uleb(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; !c->bad; shift += 7) {
		uint8_t b;

		if (c->p >= c->end || shift > 63) {
			c->bad = true;
			break;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t read_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	do {
		if (c->bad || c->p >= c->end || shift > 63) {
			c->bad = true;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

static uint64_t sign_extend(uint64_t v, unsigned int bits)
{
	uint64_t m = 1ull << (bits - 1);

	return (v ^ m) - m;
}

/* A value in the format of enc's low nibble; false for a format not read here. */
static bool read_value(struct cur *c, uint8_t enc, uint64_t *out)
{
	switch (enc & PE_FORMAT) {
	case 0x00: *out = read_fixed(c, 8); break;		/* absptr */
	case 0x01: *out = read_uleb(c); break;
	case 0x02: *out = read_fixed(c, 2); break;
	case 0x03: *out = read_fixed(c, 4); break;
	case 0x04: *out = read_fixed(c, 8); break;
	case 0x09: *out = (uint64_t)read_sleb(c); break;
	case 0x0a: *out = sign_extend(read_fixed(c, 2), 16); break;
	case 0x0b: *out = sign_extend(read_fixed(c, 4), 32); break;
	case 0x0c: *out = read_fixed(c, 8); break;
	default: return false;
	}
	return !c->bad;
}

/* A pointer in encoding enc, whose field lies at vaddr. false: unreadable, or a base not known here. */
static bool read_encoded(struct cur *c, uint8_t enc, uint64_t vaddr, uint64_t *out)
{
	uint64_t v;

	if (!read_value(c, enc, &v))
		return false;
	switch (enc & PE_APPLY) {
	case PE_ABSPTR: break;
	case PE_PCREL: v += vaddr; break;
	default: return false;		/* text-, data- or function-relative: bases we do not have */
	}
	*out = v;
	return !(enc & 0x80);		/* indirect: the value is where the pointer is stored */
}

/* The FDE pointer encoding of the CIE at cie[0..len); false when the CIE cannot be read. */
static bool cie_fde_encoding(const uint8_t *cie, const uint8_t *end, uint8_t *enc)
{
	struct cur c = { .p = cie, .end = end };
	const char *aug;
	uint8_t version;
	uint64_t aug_len;

	*enc = PE_ABSPTR;
	version = (uint8_t)read_fixed(&c, 1);
	aug = (const char *)c.p;
	while (!c.bad && read_fixed(&c, 1))
		;
	if (c.bad || (version != 1 && version != 3 && version != 4))
		return false;
	if (version == 4) {
		read_fixed(&c, 1);	/* address size */
		read_fixed(&c, 1);	/* segment selector size */
	}
	if (aug[0] == 'e' && aug[1] == 'h')
		read_fixed(&c, 8);	/* the old GNU "eh" data pointer */
	read_uleb(&c);			/* code alignment */
	read_sleb(&c);			/* data alignment */
	if (version == 1)
		read_fixed(&c, 1);	/* return address register */
	else
		read_uleb(&c);
	if (aug[0] != 'z')
		return !c.bad && !aug[0];	/* an augmentation without sizes: nothing more is readable */
	aug_len = read_uleb(&c);
	if (c.bad || aug_len > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + aug_len;
	for (const char *a = aug + 1; *a && !c.bad; a++) {
		uint64_t ignored;
		uint8_t pe;

		switch (*a) {
		case 'R':
			*enc = (uint8_t)read_fixed(&c, 1);
			break;
		case 'P':
			pe = (uint8_t)read_fixed(&c, 1);
			if (!read_value(&c, pe, &ignored))
				return false;
			break;
		case 'L':
			read_fixed(&c, 1);
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* Unknown data follows: 'R' may not have been reached. */
			return !strchr(a, 'R') && !c.bad;
		}
	}
	return !c.bad;
}

/* One FDE's range; false when it cannot be read (the section goes on). */
static bool fde_read(const uint8_t *body, const uint8_t *end, uint64_t body_vaddr, uint8_t enc,
		     struct fde_range *r)
{
	struct cur c = { .p = body, .end = end };
	uint64_t begin, size;

	if (enc == PE_OMIT || !read_encoded(&c, enc, body_vaddr, &begin))
		return false;
	/* The range has the format of the encoding and no base. */
	if (!read_encoded(&c, enc & PE_FORMAT, 0, &size))
		return false;
	if (!begin || !size || begin + size < begin)
		return false;
	*r = (struct fde_range){ .begin = begin, .end = begin + size };
	return true;
}

static int range_cmp(const void *a, const void *b)
{
	const struct fde_range *x = a, *y = b;

	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

int eh_frame_ranges(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_range **out, size_t *cnt)
{
	struct fde_range *ranges = NULL;
	size_t n = 0, cap = 0, off = 0;

	while (len - off >= 8) {
		const uint8_t *rec = data + off;
		uint32_t rec_len = (uint32_t)(rec[0] | rec[1] << 8 | rec[2] << 16 | (uint32_t)rec[3] << 24);
		uint32_t id = (uint32_t)(rec[4] | rec[5] << 8 | rec[6] << 16 | (uint32_t)rec[7] << 24);
		const uint8_t *end = rec + 4 + rec_len;
		struct fde_range r;
		uint8_t enc;

		if (!rec_len || rec_len == 0xffffffffu || rec_len > len - off - 4 || rec_len < 4)
			break;	/* the terminator, a 64-bit record, or one that overruns */
		/* An FDE: id is the distance back from its own field to its CIE. */
		if (id && id <= off + 4 && cie_fde_encoding(rec + 4 - id + 8, data + len, &enc) &&
		    fde_read(rec + 8, end, vaddr + off + 8, enc, &r)) {
			if (ARRAY_RESERVE(ranges, cap, n + 1)) {
				free(ranges);
				return -ENOMEM;
			}
			ranges[n++] = r;
		}
		off += 4 + (size_t)rec_len;
	}
	if (n)
		qsort(ranges, n, sizeof(*ranges), range_cmp);
	*out = ranges;
	*cnt = n;
	return 0;
}

const struct fde_range *fde_range_find(const struct fde_range *ranges, size_t cnt, uint64_t addr)
{
	/* One past the last range that begins at or before addr. */
	size_t lo = PARTITION_POINT(cnt, i, ranges[i].begin <= addr);

	return lo && addr < ranges[lo - 1].end ? &ranges[lo - 1] : NULL;
}
