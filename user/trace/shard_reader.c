// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/file_io.h"
#include "trace/shard_reader.h"
#include "util/array.h"

struct shard_reader {
	int fd;
	struct trace_shard_header hdr;
	bool has_hdr;
	__u64 size;			/* of the file when opened */
	struct block_ref *blocks;
	size_t nr_blocks;
	size_t cap_blocks;
	__u64 block_bytes;
	struct trace_damage stop;
	struct block_decoder *dec;
	unsigned char *scratch;		/* one payload as read from the file */
	size_t scratch_cap;
};

static void set_stop(struct shard_reader *r, __u64 off, __u64 end, __u64 records,
		     enum trace_damage_reason why)
{
	r->stop.offset = off;
	r->stop.bytes = end - off;
	r->stop.records = records;
	r->stop.reason = why;
}

static int push_block(struct shard_reader *r, __u64 off, const struct trace_block_header *h)
{
	if (ARRAY_RESERVE(r->blocks, r->cap_blocks, r->nr_blocks + 1))
		return -ENOMEM;
	r->blocks[r->nr_blocks].offset = off;
	r->blocks[r->nr_blocks].h = *h;
	r->nr_blocks++;
	return 0;
}

/*
 * Every header is checked (magic, CRC, lengths) before its length is used
 * to find the next one, so the walk moves forward at least one header per
 * step and stops at the first header that is not sound: past that point
 * nothing tells where blocks begin.
 */
static int index_blocks(struct shard_reader *r, __u64 off, __u64 end)
{
	struct trace_block_header h;
	enum trace_damage_reason why;
	int ret, err;

	while (off < end) {
		if (end - off < sizeof(h)) {
			set_stop(r, off, end, 0, TRACE_DMG_TRUNCATED);
			return 0;
		}
		ret = pread_full(r->fd, &h, sizeof(h), off);
		if (ret <= 0) {
			set_stop(r, off, end, 0, ret ? TRACE_DMG_READ_ERROR : TRACE_DMG_TRUNCATED);
			return 0;
		}
		why = block_header_check(&h);
		if (why) {
			set_stop(r, off, end, 0, why);
			return 0;
		}
		if (h.payload_len > end - off - sizeof(h)) {
			set_stop(r, off, end, h.nr_records, TRACE_DMG_TRUNCATED);
			return 0;
		}
		err = push_block(r, off, &h);
		if (err)
			return err;
		off += sizeof(h) + h.payload_len;
		r->block_bytes += sizeof(h) + h.payload_len;
	}
	return 0;
}

static struct shard_reader *reader_new(void)
{
	struct shard_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fd = -1;
	r->dec = block_decoder__new();
	if (!r->dec) {
		free(r);
		return NULL;
	}
	return r;
}

static enum trace_damage_reason check_shard_header(const struct trace_shard_header *h)
{
	if (memcmp(h->magic, TRACE_SHARD_MAGIC, sizeof(h->magic)))
		return TRACE_DMG_BAD_FILE_HEADER;
	if (!trace_crc_ok(h->header_crc, h, offsetof(struct trace_shard_header, header_crc)))
		return TRACE_DMG_BAD_FILE_HEADER;
	if (h->version != TRACE_FORMAT_VERSION)
		return TRACE_DMG_VERSION;
	if (h->header_size != sizeof(*h) || h->record_size != TRACE_RECORD_SIZE)
		return TRACE_DMG_BAD_FILE_HEADER;
	return TRACE_DMG_NONE;
}

int shard_reader__open(struct shard_reader **out, int dirfd, const char *path)
{
	struct shard_reader *r;
	enum trace_damage_reason why;
	struct stat st;
	__u64 size;
	int err, ret;

	*out = NULL;
	r = reader_new();
	if (!r)
		return -ENOMEM;
	r->fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0 || fstat(r->fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	size = (__u64)st.st_size;
	r->size = size;
	if (!size)
		goto done;	/* created, killed before its header: empty */
	if (size < sizeof(r->hdr)) {
		set_stop(r, 0, size, 0, TRACE_DMG_TRUNCATED);
		goto done;
	}
	ret = pread_full(r->fd, &r->hdr, sizeof(r->hdr), 0);
	if (ret <= 0) {
		set_stop(r, 0, size, 0, ret ? TRACE_DMG_READ_ERROR : TRACE_DMG_TRUNCATED);
		goto done;
	}
	why = check_shard_header(&r->hdr);
	if (why) {
		set_stop(r, 0, size, 0, why);
		goto done;
	}
	r->has_hdr = true;
	err = index_blocks(r, sizeof(r->hdr), size);
	if (err)
		goto cleanup;
done:
	*out = r;
	return 0;

cleanup:
	shard_reader__free(r);
	return err;
}

int shard_reader__open_region(struct shard_reader **out, int fd, __u64 start, __u64 end)
{
	struct shard_reader *r;
	int err;

	*out = NULL;
	if (start > end)
		return -EINVAL;
	r = reader_new();
	if (!r)
		return -ENOMEM;
	r->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (r->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = index_blocks(r, start, end);
	if (err)
		goto cleanup;
	*out = r;
	return 0;

cleanup:
	shard_reader__free(r);
	return err;
}

void shard_reader__free(struct shard_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	block_decoder__free(r->dec);
	free(r->blocks);
	free(r->scratch);
	free(r);
}

void shard_reader__expect(struct shard_reader *r, __u64 recording_id, __u64 blocks,
			  __u64 records)
{
	__u64 have = 0, lost;

	if (r->has_hdr && r->hdr.recording_id != recording_id) {
		r->nr_blocks = 0;
		r->block_bytes = 0;
		set_stop(r, 0, r->size, records, TRACE_DMG_FOREIGN);
		return;
	}
	for (size_t i = 0; i < r->nr_blocks; i++)
		have += r->blocks[i].h.nr_records;
	lost = records > have ? records - have : 0;
	if (r->stop.reason != TRACE_DMG_NONE) {
		if (lost > r->stop.records)
			r->stop.records = lost;
	} else if (r->nr_blocks < blocks || lost) {
		set_stop(r, r->size, r->size, lost, TRACE_DMG_SHORT);
	}
}

const struct trace_shard_header *shard_reader__header(const struct shard_reader *r)
{
	return r->has_hdr ? &r->hdr : NULL;
}

size_t shard_reader__nr_blocks(const struct shard_reader *r)
{
	return r->nr_blocks;
}

const struct block_ref *shard_reader__block(const struct shard_reader *r, size_t i)
{
	return i < r->nr_blocks ? &r->blocks[i] : NULL;
}

const struct trace_damage *shard_reader__stop(const struct shard_reader *r)
{
	return &r->stop;
}

__u64 shard_reader__block_bytes(const struct shard_reader *r)
{
	return r->block_bytes;
}

enum trace_damage_reason shard_reader__read_block(struct shard_reader *r, size_t i,
						  struct call_record *out)
{
	const struct block_ref *b = shard_reader__block(r, i);
	int ret;

	if (!b)
		return TRACE_DMG_BAD_LENGTHS;
	if (b->h.payload_len > r->scratch_cap) {
		/* Bounded: the header check capped payload_len at TRACE_BLOCK_MAX_RAW. */
		unsigned char *p = realloc(r->scratch, b->h.payload_len);

		if (!p)
			return TRACE_DMG_READ_ERROR;
		r->scratch = p;
		r->scratch_cap = b->h.payload_len;
	}
	ret = pread_full(r->fd, r->scratch, b->h.payload_len, b->offset + sizeof(b->h));
	if (ret <= 0)
		return ret ? TRACE_DMG_READ_ERROR : TRACE_DMG_TRUNCATED;
	return block_decoder__decode(r->dec, &b->h, r->scratch, out);
}
