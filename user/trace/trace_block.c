// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "trace/trace_block.h"

/* Records are stored in host order; only little-endian hosts write the documented layout. */
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "trace files are little endian; a big-endian build needs byte swapping here"
#endif

static const char *const damage_names[TRACE_DMG__COUNT] = {
	[TRACE_DMG_NONE] = "no damage",
	[TRACE_DMG_TRUNCATED] = "truncated",
	[TRACE_DMG_BAD_MAGIC] = "bad block magic",
	[TRACE_DMG_BAD_HEADER_CRC] = "bad block header CRC",
	[TRACE_DMG_BAD_LENGTHS] = "impossible block lengths",
	[TRACE_DMG_BAD_PAYLOAD_CRC] = "bad payload CRC",
	[TRACE_DMG_BAD_PAYLOAD] = "payload does not decompress",
	[TRACE_DMG_UNSORTED] = "records out of order",
	[TRACE_DMG_READ_ERROR] = "read error",
	[TRACE_DMG_BAD_FILE_HEADER] = "bad shard header",
	[TRACE_DMG_VERSION] = "unsupported format version",
	[TRACE_DMG_MISSING] = "shard file missing",
	[TRACE_DMG_OVERLAP] = "too many overlapping blocks for the memory budget",
	[TRACE_DMG_SHORT] = "shorter than the metadata says: cut at a block boundary or emptied",
	[TRACE_DMG_FOREIGN] = "refused: belongs to another recording, its recording id differs from meta.json's",
};

const char *trace_damage_reason_str(enum trace_damage_reason r)
{
	return (unsigned int)r < TRACE_DMG__COUNT ? damage_names[r] : "unknown damage";
}

__u32 trace_crc(const void *buf, size_t len)
{
	return (__u32)crc32_z(0, buf, len);
}

bool trace_crc_ok(__u32 stored, const void *buf, size_t len)
{
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
	(void)stored;
	(void)buf;
	(void)len;
	return true;
#else
	return stored == trace_crc(buf, len);
#endif
}

int trace_compression_parse(const char *s, enum trace_compression *comp, int *level)
{
	if (!strcmp(s, "none")) {
		*comp = TRACE_COMP_NONE;
		*level = 0;
		return 0;
	}
	if (!strcmp(s, "zlib")) {
		*comp = TRACE_COMP_ZLIB;
		*level = TRACE_ZLIB_LEVEL_DEFAULT;
		return 0;
	}
	if (!strncmp(s, "zlib:", 5) && s[5] >= '1' && s[5] <= '9' && !s[6]) {
		*comp = TRACE_COMP_ZLIB;
		*level = s[5] - '0';
		return 0;
	}
	return -EINVAL;
}

struct block_encoder {
	enum trace_compression comp;
	z_stream zs;
	bool zs_ready;
	unsigned char *out;
	size_t out_cap;
};

struct block_encoder *block_encoder__new(enum trace_compression comp, int level)
{
	struct block_encoder *e;

	if (comp != TRACE_COMP_NONE && comp != TRACE_COMP_ZLIB) {
		errno = EINVAL;
		return NULL;
	}
	if (level == 0)
		level = TRACE_ZLIB_LEVEL_DEFAULT;
	if (level < 1 || level > 9) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->comp = comp;
	if (comp == TRACE_COMP_ZLIB) {
		if (deflateInit2(&e->zs, level, Z_DEFLATED, 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(e);
			errno = ENOMEM;
			return NULL;
		}
		e->zs_ready = true;
	}
	return e;
}

void block_encoder__free(struct block_encoder *e)
{
	if (!e)
		return;
	if (e->zs_ready)
		deflateEnd(&e->zs);
	free(e->out);
	free(e);
}

/* The deflated size, or 0 when it would not be smaller than raw_len. */
static size_t deflate_into(struct block_encoder *e, const void *raw, size_t raw_len, void *dst)
{
	int ret;

	if (deflateReset(&e->zs) != Z_OK)
		return 0;
	e->zs.next_in = (Bytef *)raw;
	e->zs.avail_in = (uInt)raw_len;
	e->zs.next_out = dst;
	/* Output room of raw_len: if zlib needs more, storing raw is better anyway. */
	e->zs.avail_out = (uInt)raw_len;
	ret = deflate(&e->zs, Z_FINISH);
	if (ret != Z_STREAM_END)
		return 0;
	return raw_len - e->zs.avail_out;
}

int block_encoder__encode(struct block_encoder *e, const struct call_record *recs, __u32 nr,
			  __u16 flags, const void **buf, size_t *len)
{
	size_t raw_len = (size_t)nr * sizeof(*recs), need = sizeof(struct trace_block_header) + raw_len;
	struct trace_block_header h;
	unsigned char *payload;
	size_t clen = 0;

	if (!nr || nr > TRACE_BLOCK_MAX_RECORDS)
		return -EINVAL;
	for (__u32 i = 1; i < nr; i++)
		if (recs[i].ts_ns < recs[i - 1].ts_ns)
			return -EINVAL;
	if (need > e->out_cap) {
		unsigned char *p = realloc(e->out, need);

		if (!p)
			return -ENOMEM;
		e->out = p;
		e->out_cap = need;
	}
	payload = e->out + sizeof(h);
	if (e->comp == TRACE_COMP_ZLIB)
		clen = deflate_into(e, recs, raw_len, payload);

	memset(&h, 0, sizeof(h));
	h.magic = TRACE_BLOCK_MAGIC;
	h.flags = flags;
	h.raw_len = (__u32)raw_len;
	h.nr_records = nr;
	h.first_ts_ns = recs[0].ts_ns;
	h.last_ts_ns = recs[nr - 1].ts_ns;
	if (clen) {
		h.compression = TRACE_COMP_ZLIB;
		h.payload_len = (__u32)clen;
	} else {
		h.compression = TRACE_COMP_NONE;
		h.payload_len = (__u32)raw_len;
		memcpy(payload, recs, raw_len);
	}
	h.payload_crc = trace_crc(payload, h.payload_len);
	h.header_crc = trace_crc(&h, offsetof(struct trace_block_header, header_crc));
	memcpy(e->out, &h, sizeof(h));
	*buf = e->out;
	*len = sizeof(h) + h.payload_len;
	return 0;
}

enum trace_damage_reason block_header_check(const struct trace_block_header *h)
{
	if (h->magic != TRACE_BLOCK_MAGIC)
		return TRACE_DMG_BAD_MAGIC;
	if (!trace_crc_ok(h->header_crc, h, offsetof(struct trace_block_header, header_crc)))
		return TRACE_DMG_BAD_HEADER_CRC;
	if (!h->nr_records || h->nr_records > TRACE_BLOCK_MAX_RECORDS ||
	    h->raw_len != h->nr_records * TRACE_RECORD_SIZE || !h->payload_len ||
	    h->payload_len > h->raw_len || h->first_ts_ns > h->last_ts_ns)
		return TRACE_DMG_BAD_LENGTHS;
	if (h->compression == TRACE_COMP_NONE ? h->payload_len != h->raw_len
					      : h->compression != TRACE_COMP_ZLIB)
		return TRACE_DMG_BAD_LENGTHS;
	return TRACE_DMG_NONE;
}

struct block_decoder {
	z_stream zs;
};

struct block_decoder *block_decoder__new(void)
{
	struct block_decoder *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (inflateInit(&d->zs) != Z_OK) {
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void block_decoder__free(struct block_decoder *d)
{
	if (!d)
		return;
	inflateEnd(&d->zs);
	free(d);
}

static bool inflate_exact(struct block_decoder *d, const void *src, size_t len, void *dst,
			  size_t raw_len)
{
	int ret;

	if (inflateReset(&d->zs) != Z_OK)
		return false;
	d->zs.next_in = (Bytef *)src;
	d->zs.avail_in = (uInt)len;
	d->zs.next_out = dst;
	d->zs.avail_out = (uInt)raw_len;
	/* The output room is exactly raw_len: a stream that wants more is damage. */
	ret = inflate(&d->zs, Z_FINISH);
	return ret == Z_STREAM_END && !d->zs.avail_out && !d->zs.avail_in;
}

enum trace_damage_reason block_decoder__decode(struct block_decoder *d,
					       const struct trace_block_header *h,
					       const void *payload, struct call_record *out)
{
	__u32 n = h->nr_records;

	if (!trace_crc_ok(h->payload_crc, payload, h->payload_len))
		return TRACE_DMG_BAD_PAYLOAD_CRC;
	if (h->compression == TRACE_COMP_NONE)
		memcpy(out, payload, h->raw_len);
	else if (!inflate_exact(d, payload, h->payload_len, out, h->raw_len))
		return TRACE_DMG_BAD_PAYLOAD;
	/* The merge trusts first/last ts and the order: check them, not just the CRC. */
	if (out[0].ts_ns != h->first_ts_ns || out[n - 1].ts_ns != h->last_ts_ns)
		return TRACE_DMG_UNSORTED;
	for (__u32 i = 1; i < n; i++)
		if (out[i].ts_ns < out[i - 1].ts_ns)
			return TRACE_DMG_UNSORTED;
	return TRACE_DMG_NONE;
}
