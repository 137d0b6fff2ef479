// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trace/trace_block.h"
#include "util/file_io.h"
#include "output/output_file.h"
#include "trace/trace_dlt.h"

struct dlt_writer {
	struct output_file *out;
	int fd;				/* out's temporary file */
	enum trace_compression comp;
	struct block_encoder *enc;
	struct call_record *buf;
	__u32 nr_buf;
	__u32 block_records;
	__u64 off;
	__u64 nr_records;
	__u64 nr_blocks;
	__u64 last_ts;
};

struct dlt_writer *dlt_writer__new(const char *path, enum trace_compression comp, int level,
				   __u32 block_records)
{
	struct dlt_writer *w;
	char why[512];
	int err = -ENOMEM;

	if (!block_records)
		block_records = TRACE_BLOCK_RECORDS_DEFAULT;
	if (block_records > TRACE_BLOCK_MAX_RECORDS) {
		errno = EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->comp = comp;
	w->block_records = block_records;
	w->off = sizeof(struct trace_dlt_header);
	w->buf = malloc(block_records * sizeof(*w->buf));
	if (!w->buf)
		goto cleanup;
	w->enc = block_encoder__new(comp, level);
	if (!w->enc) {
		err = -errno;
		goto cleanup;
	}
	err = output_file__open(&w->out, path, NULL, why, sizeof(why));
	if (err)
		goto cleanup;
	w->fd = output_file__fd(w->out);
	return w;

cleanup:
	dlt_writer__free(w);
	errno = -err;
	return NULL;
}

void dlt_writer__free(struct dlt_writer *w)
{
	if (!w)
		return;
	output_file__free(w->out);
	block_encoder__free(w->enc);
	free(w->buf);
	free(w);
}

static int write_block(struct dlt_writer *w)
{
	const void *p;
	size_t len;
	int err;

	if (!w->nr_buf)
		return 0;
	err = block_encoder__encode(w->enc, w->buf, w->nr_buf, 0, &p, &len);
	if (!err)
		err = pwrite_full(w->fd, p, len, w->off);
	if (err)
		return err;
	w->off += len;
	w->nr_records += w->nr_buf;
	w->nr_blocks++;
	w->nr_buf = 0;
	return 0;
}

int dlt_writer__add(struct dlt_writer *w, const struct call_record *r)
{
	if ((w->nr_records || w->nr_buf) && r->ts_ns < w->last_ts)
		return -EINVAL;
	w->last_ts = r->ts_ns;
	w->buf[w->nr_buf++] = *r;
	return w->nr_buf == w->block_records ? write_block(w) : 0;
}

__u64 dlt_writer__bytes(const struct dlt_writer *w)
{
	return w->off;
}

int dlt_writer__finish(struct dlt_writer *w, struct trace_meta *meta)
{
	struct trace_dlt_header h;
	size_t meta_len;
	char *text = NULL;
	int err;

	err = write_block(w);
	if (err)
		return err;
	meta->merged = true;
	meta->merge.records = w->nr_records;
	text = trace_meta__to_json(meta, &meta_len);
	if (!text)
		return -ENOMEM;
	err = pwrite_full(w->fd, text, meta_len, w->off);
	if (err)
		goto cleanup;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_DLT_MAGIC, sizeof(h.magic));
	h.version = TRACE_FORMAT_VERSION;
	h.header_size = sizeof(h);
	h.record_size = sizeof(struct call_record);
	h.meta_offset = w->off;
	h.meta_len = meta_len;
	h.nr_records = w->nr_records;
	h.nr_blocks = w->nr_blocks;
	h.meta_crc = trace_crc(text, meta_len);
	h.compression = w->comp;
	h.header_crc = trace_crc(&h, offsetof(struct trace_dlt_header, header_crc));
	/* Last: until this lands, the file reads as "not a .dlt" rather than as a short one. */
	err = pwrite_full(w->fd, &h, sizeof(h), 0);
	if (err)
		goto cleanup;
	w->off += meta_len;
	err = output_file__commit(w->out);
cleanup:
	free(text);
	return err;
}

/* 0, -ENODATA when the file ends first, or -errno. */
static int read_exact(int fd, void *buf, size_t len, __u64 off)
{
	int ret = pread_full(fd, buf, len, off);

	return ret == 1 ? 0 : ret ?: -ENODATA;
}

static int bad(char *err, size_t err_sz, const char *what)
{
	snprintf(err, err_sz, "%s", what);
	return -EINVAL;
}

static int check_header(const struct trace_dlt_header *h, __u64 size, char *err, size_t err_sz)
{
	if (memcmp(h->magic, TRACE_DLT_MAGIC, sizeof(h->magic)))
		return bad(err, err_sz, "not a dlprof-bpf trace file (no DLPTRACE header)");
	if (!trace_crc_ok(h->header_crc, h, offsetof(struct trace_dlt_header, header_crc)))
		return bad(err, err_sz, "its header is damaged (CRC mismatch)");
	if (h->version != TRACE_FORMAT_VERSION) {
		snprintf(err, err_sz, "format version %u, this build reads version %d",
			 h->version, TRACE_FORMAT_VERSION);
		return -EINVAL;
	}
	if (h->header_size != sizeof(*h) || h->record_size != TRACE_RECORD_SIZE ||
	    h->meta_offset < sizeof(*h) || h->meta_offset > size ||
	    h->meta_len > size - h->meta_offset || h->meta_len > TRACE_META_MAX_BYTES)
		return bad(err, err_sz, "its header does not match the file (cut short?)");
	return 0;
}

int dlt_open(const char *path, struct trace_meta **meta, struct shard_reader **blocks,
	     char *err, size_t err_sz)
{
	struct trace_dlt_header h;
	struct trace_meta *m = NULL;
	char *text = NULL, why[256];
	struct stat st;
	int fd, ret;

	*meta = NULL;
	*blocks = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, err_sz, "%s", strerror(errno));
		goto cleanup;
	}
	if ((__u64)st.st_size < sizeof(h)) {
		ret = bad(err, err_sz, "not a dlprof-bpf trace file (too short)");
		goto cleanup;
	}
	ret = read_exact(fd, &h, sizeof(h), 0);
	if (!ret)
		ret = check_header(&h, (__u64)st.st_size, err, err_sz);
	else
		snprintf(err, err_sz, "%s", strerror(-ret));
	if (ret)
		goto cleanup;
	text = malloc(h.meta_len + 1);
	if (!text) {
		ret = -ENOMEM;
		snprintf(err, err_sz, "out of memory");
		goto cleanup;
	}
	ret = read_exact(fd, text, h.meta_len, h.meta_offset);
	if (ret) {
		snprintf(err, err_sz, "%s", strerror(-ret));
		goto cleanup;
	}
	if (!trace_crc_ok(h.meta_crc, text, h.meta_len)) {
		ret = bad(err, err_sz, "its metadata is damaged (CRC mismatch)");
		goto cleanup;
	}
	ret = trace_meta__parse(&m, text, h.meta_len, why, sizeof(why));
	if (ret) {
		snprintf(err, err_sz, "its metadata is invalid: %s", why);
		goto cleanup;
	}
	ret = shard_reader__open_region(blocks, fd, sizeof(h), h.meta_offset);
	if (ret) {
		snprintf(err, err_sz, "%s", strerror(-ret));
		goto cleanup;
	}
	*meta = m;
	m = NULL;
cleanup:
	trace_meta__free(m);
	free(text);
	if (fd >= 0)
		close(fd);
	return ret;
}
