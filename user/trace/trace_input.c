// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trace/trace_dlt.h"
#include "trace/trace_input.h"

struct trace_input {
	struct trace_meta *meta;
	struct trace_merge *merge;
};

static int open_dir(struct trace_input *in, const char *path, char *err, size_t err_sz)
{
	char why[256], name[32];
	int dirfd, ret;

	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0) {
		ret = -errno;
		snprintf(err, err_sz, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	ret = trace_meta__load(&in->meta, dirfd, why, sizeof(why));
	if (ret == -ENOENT) {
		snprintf(err, err_sz, "%s is not a trace directory (no %s)", path, TRACE_META_FILE);
		ret = -EINVAL;
		goto cleanup;
	}
	if (ret) {
		snprintf(err, err_sz, "%s/%s is corrupt: %s", path, TRACE_META_FILE, why);
		ret = -EINVAL;
		goto cleanup;
	}
	for (__u32 c = 0; c < in->meta->nr_cpus; c++) {
		const struct trace_cpu_counts *cpu = &in->meta->cpus[c];
		struct shard_reader *r;

		snprintf(name, sizeof(name), "cpu%u.shard", c);
		ret = shard_reader__open(&r, dirfd, name);
		if (ret == -ENOENT) {
			struct trace_damage d = { .records = cpu->records, .reason = TRACE_DMG_MISSING };

			ret = trace_merge__add_damage(in->merge, name, &d);
		} else if (ret) {
			snprintf(err, err_sz, "cannot read %s/%s: %s", path, name, strerror(-ret));
			goto cleanup;
		} else {
			shard_reader__expect(r, in->meta->recording_id, cpu->blocks, cpu->records);
			ret = trace_merge__add_source(in->merge, r, name);
		}
		if (ret) {
			snprintf(err, err_sz, "%s", strerror(-ret));
			goto cleanup;
		}
	}
cleanup:
	close(dirfd);
	return ret;
}

static int open_dlt(struct trace_input *in, const char *path, char *err, size_t err_sz)
{
	struct shard_reader *r;
	char why[256];
	const char *base = strrchr(path, '/');
	int ret;

	ret = dlt_open(path, &in->meta, &r, why, sizeof(why));
	if (ret) {
		snprintf(err, err_sz, "%s: %s", path, why);
		return ret;
	}
	ret = trace_merge__add_source(in->merge, r, base ? base + 1 : path);
	if (ret)
		snprintf(err, err_sz, "%s", strerror(-ret));
	return ret;
}

int trace_input__open(struct trace_input **out, const char *path, char *err, size_t err_sz)
{
	struct trace_input *in;
	struct stat st;
	int ret;

	*out = NULL;
	if (stat(path, &st)) {
		ret = -errno;
		snprintf(err, err_sz, "cannot open %s: %s", path, strerror(errno));
		return ret;
	}
	in = calloc(1, sizeof(*in));
	if (!in || !(in->merge = trace_merge__new(0))) {
		free(in);
		snprintf(err, err_sz, "out of memory");
		return -ENOMEM;
	}
	if (S_ISDIR(st.st_mode)) {
		ret = open_dir(in, path, err, err_sz);
	} else if (S_ISREG(st.st_mode)) {
		ret = open_dlt(in, path, err, err_sz);
	} else {
		snprintf(err, err_sz, "%s is neither a trace directory nor a .dlt file", path);
		ret = -EINVAL;
	}
	if (ret) {
		trace_input__free(in);
		return ret;
	}
	*out = in;
	return 0;
}

void trace_input__free(struct trace_input *in)
{
	if (!in)
		return;
	trace_meta__free(in->meta);
	trace_merge__free(in->merge);
	free(in);
}

const struct trace_meta *trace_input__meta(const struct trace_input *in)
{
	return in->meta;
}

int trace_input__next(struct trace_input *in, const struct call_record **rec)
{
	return trace_merge__next(in->merge, rec);
}

const struct trace_merge *trace_input__merge(const struct trace_input *in)
{
	return in->merge;
}

double trace_input__progress(const struct trace_input *in)
{
	struct trace_merge_stats st;

	trace_merge__stats(in->merge, &st);
	return st.bytes_total ? (double)st.bytes_done / (double)st.bytes_total : 1.0;
}

void trace_input__losses(const struct trace_input *in, struct trace_losses *l)
{
	const struct trace_meta *m = in->meta;

	memset(l, 0, sizeof(*l));
	l->ringbuf_drops = trace_meta__drops(m);
	l->write_lost = trace_meta__write_lost(m);
	/* A trace closed with write errors lost only what write_lost counts. */
	l->unclean_end = !m->ended_cleanly && !m->closed;
	/* A flush writes the calls that ended up to the reorder window before it: the rest waited. */
	l->gap_s = TRACE_FLUSH_INTERVAL_S + (double)m->reorder_window_ns / 1e9;
	if (l->unclean_end && m->last_flush_ns > m->mono_start_ns + m->reorder_window_ns)
		l->written_s = (double)(m->last_flush_ns - m->reorder_window_ns - m->mono_start_ns) / 1e9;
	if (m->merged) {
		l->damaged = m->merge.damaged_blocks;
		l->skipped_bytes = m->merge.skipped_bytes;
		l->skipped_records = m->merge.skipped_records;
	}
	for (size_t i = 0; i < trace_merge__nr_damage(in->merge); i++) {
		const struct trace_damage *d = &trace_merge__damage(in->merge, i)->d;

		l->damaged++;
		l->skipped_bytes += d->bytes;
		l->skipped_records += d->records;
	}
}

bool trace_losses_describe(const struct trace_losses *l, char *buf, size_t sz)
{
	size_t n = 0;

#define ADD(...) do { if (n < sz) n += (size_t)snprintf(buf + n, sz - n, __VA_ARGS__); } while (0)
	if (sz)
		buf[0] = 0;
	ADD("incomplete trace:");
	if (l->ringbuf_drops)
		ADD(" %" PRIu64 " records dropped (ringbuf full);", (uint64_t)l->ringbuf_drops);
	if (l->write_lost)
		ADD(" %" PRIu64 " records lost to write errors;", (uint64_t)l->write_lost);
	if (l->damaged) {
		ADD(" %" PRIu64 " damaged part%s skipped (%" PRIu64 " bytes", (uint64_t)l->damaged,
		    l->damaged == 1 ? "" : "s", (uint64_t)l->skipped_bytes);
		if (l->skipped_records)
			ADD(", at least %" PRIu64 " records", (uint64_t)l->skipped_records);
		ADD(");");
	}
	/* The recorder flushes every TRACE_FLUSH_INTERVAL_S: what it held past the last flush died with it. */
	if (l->unclean_end && l->written_s > 0)
		ADD(" the recording was cut off (never closed): it holds the calls of its first %.1f s, and those of "
		    "at most %.1f s after that were never written;", l->written_s, l->gap_s);
	else if (l->unclean_end)
		ADD(" the recording was cut off (never closed) before it had written a flush interval: calls of at "
		    "most its first %.1f s were never written;", l->gap_s);
#undef ADD
	if (!l->ringbuf_drops && !l->write_lost && !l->damaged && !l->unclean_end)
		return false;
	if (n && n < sz && buf[n - 1] == ';')
		buf[n - 1] = 0;
	return true;
}
