// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/file_io.h"
#include "trace/shard_writer.h"
#include "trace/trace_block.h"
#include "trace/trace_heap.h"

struct shard_writer {
	int fd;
	__u64 good_end;			/* file offset just past the last whole block */
	struct block_encoder *enc;
	__u32 block_records;
	__u32 max_held;
	__u64 window_ns;

	/* The reorder window: records in a slab, a heap of (ts_ns, slot). */
	struct call_record *held;
	__u32 held_cap;
	__u32 held_used;		/* slots handed out so far (free ones are on free_slots) */
	__u32 *free_slots;
	__u32 nr_free;
	struct trace_heap heap;
	__u64 horizon_ns;		/* newest return time (ts + dur) seen, or now_ns of a flush */

	/* Records leave the window in ts order into cur; older ones go to late. */
	struct call_record *cur;
	__u32 nr_cur;
	struct call_record *late;
	__u32 nr_late;
	__u64 watermark_ns;		/* ts_ns of the last record that left the window */
	bool emitted_any;

	struct shard_writer_stats st;
};

static int write_header(struct shard_writer *sw, const struct shard_writer_opts *o)
{
	struct trace_shard_header h;
	int err;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_SHARD_MAGIC, sizeof(h.magic));
	h.version = TRACE_FORMAT_VERSION;
	h.header_size = sizeof(h);
	h.record_size = sizeof(struct call_record);
	h.cpu = o->cpu;
	h.compression = o->compression;
	h.mono_start_ns = o->mono_start_ns;
	h.realtime_offset_ns = o->realtime_offset_ns;
	h.reorder_window_ns = o->reorder_window_ns;
	h.recording_id = o->recording_id;
	h.block_records = sw->block_records;
	h.header_crc = trace_crc(&h, offsetof(struct trace_shard_header, header_crc));
	err = pwrite_full(sw->fd, &h, sizeof(h), 0);
	if (err)
		return err;
	sw->good_end = sizeof(h);
	sw->st.bytes = sw->good_end;
	return 0;
}

struct shard_writer *shard_writer__new(int dirfd, const char *name,
				       const struct shard_writer_opts *opts)
{
	struct shard_writer *sw;
	int err = -ENOMEM;

	if (!opts->block_records || opts->block_records > TRACE_BLOCK_MAX_RECORDS ||
	    !opts->max_held) {
		errno = EINVAL;
		return NULL;
	}
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return NULL;
	sw->fd = -1;
	sw->block_records = opts->block_records;
	sw->max_held = opts->max_held;
	sw->window_ns = opts->reorder_window_ns;
	sw->cur = malloc(sw->block_records * sizeof(*sw->cur));
	sw->late = malloc(sw->block_records * sizeof(*sw->late));
	if (!sw->cur || !sw->late)
		goto cleanup;
	sw->enc = block_encoder__new(opts->compression, opts->level);
	if (!sw->enc) {
		err = -errno;
		goto cleanup;
	}
	/* A new file: whatever is at name (a link planted in the directory) is not written through. */
	sw->fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (sw->fd < 0) {
		err = -errno;
		goto cleanup;
	}
	err = write_header(sw, opts);
	if (err)
		goto cleanup;
	return sw;

cleanup:
	shard_writer__free(sw);
	errno = -err;
	return NULL;
}

void shard_writer__free(struct shard_writer *sw)
{
	if (!sw)
		return;
	if (sw->fd >= 0)
		close(sw->fd);
	block_encoder__free(sw->enc);
	free(sw->held);
	free(sw->free_slots);
	heap_free(&sw->heap);
	free(sw->cur);
	free(sw->late);
	free(sw);
}

/* One block, one write: a reader sees all of it or (after a crash) a cut tail it skips. */
static int write_block(struct shard_writer *sw, const struct call_record *recs, __u32 nr,
		       __u16 flags)
{
	const void *buf;
	size_t len;
	int err;

	err = block_encoder__encode(sw->enc, recs, nr, flags, &buf, &len);
	if (!err)
		err = pwrite_full(sw->fd, buf, len, (off_t)sw->good_end);
	if (err) {
		/* Whatever part of the block reached the file would read as damage. */
		if (ftruncate(sw->fd, (off_t)sw->good_end)) {
			/* The reader will stop at the partial block and report it. */
		}
		sw->st.records_lost += nr;
		return err;
	}
	sw->good_end += len;
	sw->st.bytes = sw->good_end;
	sw->st.blocks++;
	sw->st.records_written += nr;
	if (flags & TRACE_BLOCK_F_LATE) {
		sw->st.late_blocks++;
		sw->st.late_records += nr;
	}
	return 0;
}

static int write_cur(struct shard_writer *sw)
{
	__u32 nr = sw->nr_cur;

	if (!nr)
		return 0;
	sw->nr_cur = 0;
	return write_block(sw, sw->cur, nr, 0);
}

static int ts_cmp(const void *a, const void *b)
{
	const struct call_record *x = a, *y = b;

	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

static int write_late(struct shard_writer *sw)
{
	__u32 nr = sw->nr_late;

	if (!nr)
		return 0;
	sw->nr_late = 0;
	qsort(sw->late, nr, sizeof(*sw->late), ts_cmp);
	return write_block(sw, sw->late, nr, TRACE_BLOCK_F_LATE);
}

/* r leaves the window: it is the oldest record held and not older than the watermark. */
static int emit(struct shard_writer *sw, const struct call_record *r)
{
	sw->cur[sw->nr_cur++] = *r;
	sw->watermark_ns = r->ts_ns;
	sw->emitted_any = true;
	return sw->nr_cur == sw->block_records ? write_cur(sw) : 0;
}

static int add_late(struct shard_writer *sw, const struct call_record *r)
{
	sw->late[sw->nr_late++] = *r;
	return sw->nr_late == sw->block_records ? write_late(sw) : 0;
}

static int take_slot(struct shard_writer *sw, __u32 *slot)
{
	if (sw->nr_free) {
		*slot = sw->free_slots[--sw->nr_free];
		return 0;
	}
	if (sw->held_used == sw->held_cap) {
		/* Grown on demand: most CPUs never hold more than a few records. */
		__u32 cap = sw->held_cap ? sw->held_cap * 2 : 256;
		struct call_record *h;
		__u32 *f;

		if (cap > sw->max_held)
			cap = sw->max_held;
		h = realloc(sw->held, (size_t)cap * sizeof(*h));
		if (!h)
			return -ENOMEM;
		sw->held = h;
		f = realloc(sw->free_slots, (size_t)cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		sw->free_slots = f;
		sw->held_cap = cap;
	}
	*slot = sw->held_used++;
	return 0;
}

static int pop_oldest(struct shard_writer *sw)
{
	struct heap_ent top = heap_pop(&sw->heap);

	sw->free_slots[sw->nr_free++] = (__u32)top.val;
	return emit(sw, &sw->held[top.val]);
}

/* Emit every held record with ts_ns < limit (all of them if all). */
static int drain(struct shard_writer *sw, __u64 limit, bool all)
{
	int err = 0, e;

	while (sw->heap.n && (all || heap_top(&sw->heap)->key < limit)) {
		e = pop_oldest(sw);
		if (e && !err)
			err = e;
	}
	return err;
}

static __u64 window_limit(const struct shard_writer *sw)
{
	return sw->horizon_ns > sw->window_ns ? sw->horizon_ns - sw->window_ns : 0;
}

int shard_writer__add(struct shard_writer *sw, const struct call_record *r)
{
	__u64 end = r->ts_ns + r->dur_ns;
	__u32 slot;
	int err = 0, e;

	if (end < r->ts_ns)
		end = UINT64_MAX;
	if (end > sw->horizon_ns)
		sw->horizon_ns = end;
	sw->st.records++;

	if (sw->emitted_any && r->ts_ns < sw->watermark_ns) {
		err = add_late(sw, r);
	} else if (sw->heap.n == sw->max_held) {
		/* Window full: the oldest of what is held and r goes out now. */
		if (r->ts_ns <= heap_top(&sw->heap)->key) {
			err = emit(sw, r);
		} else {
			struct heap_ent top = *heap_top(&sw->heap);

			err = emit(sw, &sw->held[top.val]);
			sw->held[top.val] = *r;
			heap_replace_top(&sw->heap, r->ts_ns, top.val);
		}
	} else {
		e = take_slot(sw, &slot);
		if (!e) {
			e = heap_push(&sw->heap, r->ts_ns, slot);
			if (e)
				sw->free_slots[sw->nr_free++] = slot;
		}
		if (e)
			/* No memory to hold it: a late block still gets it ordered by the merge. */
			err = add_late(sw, r);
		else
			sw->held[slot] = *r;
	}
	e = drain(sw, window_limit(sw), false);
	return err ? err : e;
}

int shard_writer__flush(struct shard_writer *sw, __u64 now_ns)
{
	int err, e;

	if (now_ns > sw->horizon_ns)
		sw->horizon_ns = now_ns;
	err = drain(sw, window_limit(sw), false);
	e = write_cur(sw);
	if (!err)
		err = e;
	e = write_late(sw);
	return err ? err : e;
}

int shard_writer__close(struct shard_writer *sw)
{
	int err, e;

	err = drain(sw, 0, true);
	e = write_cur(sw);
	if (!err)
		err = e;
	e = write_late(sw);
	return err ? err : e;
}

void shard_writer__stats(const struct shard_writer *sw, struct shard_writer_stats *st)
{
	*st = sw->st;
}
