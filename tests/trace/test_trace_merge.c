// SPDX-License-Identifier: GPL-2.0-only
/*
 * The merge: random shards (with calls far longer than the reorder window)
 * come out equal to the sorted concatenation, directly and through a .dlt;
 * memory stays bounded by overlapping blocks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace/shard_writer.h"
#include "trace/trace_block.h"
#include "trace/trace_dlt.h"
#include "trace/trace_input.h"
#include "trace_testutil.h"

static void check_equal_sorted(struct call_record *in, size_t n_in, struct call_record *out,
			       size_t n_out)
{
	assert_int_equal(n_out, n_in);
	assert_true(ts_ordered(out, n_out));
	sort_records(in, n_in);
	sort_records(out, n_out);
	assert_memory_equal(in, out, n_in * sizeof(*in));
}

/* In-process equivalent of `merge DIR -o FILE`. */
static void merge_to_dlt(const char *dir, const char *file, enum trace_compression comp)
{
	const struct call_record *r;
	struct trace_input *in;
	struct trace_meta *meta;
	struct dlt_writer *w;
	char err[256];

	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	w = dlt_writer__new(file, comp, 0, 300);
	assert_non_null(w);
	while (trace_input__next(in, &r) > 0)
		assert_int_equal(dlt_writer__add(w, r), 0);
	meta = trace_meta__dup(trace_input__meta(in));
	assert_non_null(meta);
	assert_int_equal(dlt_writer__finish(w, meta), 0);
	trace_meta__free(meta);
	dlt_writer__free(w);
	trace_input__free(in);
}

static void merge_random(uint64_t seed, uint32_t nr_cpus, bool compress)
{
	struct gen_opts g = { .nr_cpus = nr_cpus, .nr_calls = 60000, .seed = seed,
			      .max_gap_ns = 20000, .max_dur_ns = 300000,
			      .long_permille = 5, .long_dur_ns = 30000000, .nr_funcs = 20,
			      .nr_events = 2 };
	/* A 2 ms window: the 30-60 ms calls land far outside it. */
	struct trace_writer_opts o = { .nr_cpus = nr_cpus, .no_compress = !compress,
				       .block_size = 200 * sizeof(struct call_record),
				       .reorder_window_ns = 2000000, .max_held = 4096 };
	struct call_record *in = gen_calls(&g), *out;
	char *dir = make_tmpdir(), file[512];
	size_t n, dmg;

	assert_int_equal(feed_trace(dir, &o, in, g.nr_calls, 10000000, 20, 2), 0);
	out = read_trace(dir, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(dmg, 0);
	check_equal_sorted(in, g.nr_calls, out, n);
	free(out);

	snprintf(file, sizeof(file), "%s/all.dlt", dir);
	merge_to_dlt(dir, file, compress ? TRACE_COMP_ZLIB : TRACE_COMP_NONE);
	out = read_trace(file, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(dmg, 0);
	check_equal_sorted(in, g.nr_calls, out, n);
	free(out);
	free(in);
	remove_tree(dir);
	free(dir);
}

static void test_merge_random(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 4; seed++)
		merge_random(seed, (uint32_t)(seed * 3), seed & 1);
}

static void test_merge_one_cpu(void **state)
{
	(void)state;
	merge_random(77, 1, true);
}

/*
 * Memory: the merge never holds more blocks than those whose ts ranges
 * contain its position. With no late blocks that is at most two per shard
 * (one ending, the next starting at the same ts).
 */
static void test_merge_open_blocks_bounded(void **state)
{
	struct gen_opts g = { .nr_cpus = 8, .nr_calls = 100000, .seed = 9, .max_gap_ns = 5000,
			      .max_dur_ns = 1000, .nr_funcs = 4 };
	struct trace_writer_opts o = { .nr_cpus = 8, .block_size = 100 * sizeof(struct call_record),
				       .reorder_window_ns = 1000000 };
	struct call_record *in = gen_calls(&g);
	const struct call_record *r;
	struct trace_merge_stats st;
	struct trace_input *tin;
	char *dir = make_tmpdir(), err[256];
	size_t n = 0;

	(void)state;
	assert_int_equal(feed_trace(dir, &o, in, g.nr_calls, 1000000, 4, 0), 0);
	assert_int_equal(trace_input__open(&tin, dir, err, sizeof(err)), 0);
	while (trace_input__next(tin, &r) > 0)
		n++;
	assert_int_equal(n, g.nr_calls);
	trace_merge__stats(trace_input__merge(tin), &st);
	assert_true(st.blocks_opened >= g.nr_calls / 100);
	assert_true(st.max_open_blocks <= 2 * 8);
	assert_true(st.max_open_bytes <= 2 * 8 * 100 * sizeof(struct call_record));
	assert_int_equal(st.bytes_done, st.bytes_total);
	trace_input__free(tin);
	free(in);
	remove_tree(dir);
	free(dir);
}

/* Writes raw blocks (no writer rules) to a shard: what a hostile or buggy file holds. */
static void write_blocks(const char *path, const struct call_record *recs, const uint32_t *sizes,
			 size_t nr_blocks, uint16_t flags, uint64_t recording_id)
{
	struct trace_shard_header h = { .version = TRACE_FORMAT_VERSION, .header_size = sizeof(h),
					.record_size = TRACE_RECORD_SIZE, .recording_id = recording_id };
	struct block_encoder *e = block_encoder__new(TRACE_COMP_ZLIB, 1);
	FILE *f = fopen(path, "w");
	const void *buf;
	size_t len;

	memcpy(h.magic, TRACE_SHARD_MAGIC, 8);
	h.header_crc = trace_crc(&h, offsetof(struct trace_shard_header, header_crc));
	fwrite(&h, sizeof(h), 1, f);
	for (size_t b = 0; b < nr_blocks; b++) {
		assert_int_equal(block_encoder__encode(e, recs, sizes[b], flags, &buf, &len), 0);
		fwrite(buf, len, 1, f);
		recs += sizes[b];
	}
	fclose(f);
	block_encoder__free(e);
}

/* Normal blocks that go back in time still merge in order: each becomes its own run. */
static void test_merge_blocks_out_of_order(void **state)
{
	struct call_record recs[300], *out;
	uint32_t sizes[3] = { 100, 100, 100 };
	char *dir = make_tmpdir(), path[512];
	struct trace_writer_opts o = { .nr_cpus = 2 };
	struct trace_writer *w;
	uint64_t id;
	size_t n, dmg;

	(void)state;
	/* A valid two-CPU trace, then cpu1.shard replaced by blocks in descending ranges. */
	w = trace_writer__new(dir, &o);
	assert_non_null(w);
	assert_int_equal(trace_writer__close(w), 0);
	id = trace_writer__meta(w)->recording_id;
	trace_writer__free(w);
	memset(recs, 0, sizeof(recs));
	for (int b = 0; b < 3; b++)
		for (int i = 0; i < 100; i++)
			recs[b * 100 + i].ts_ns = (uint64_t)(3 - b) * 1000 + (uint64_t)i * 3;
	snprintf(path, sizeof(path), "%s/cpu1.shard", dir);
	write_blocks(path, recs, sizes, 3, 0, id);
	out = read_trace(dir, &n, &dmg);
	assert_int_equal(n, 300);
	assert_int_equal(dmg, 0);
	check_equal_sorted(recs, 300, out, n);
	free(out);
	remove_tree(dir);
	free(dir);
}

/* More overlapping data than the budget: skipped and reported, not allocated. */
static void test_merge_budget(void **state)
{
	struct call_record recs[400];
	uint32_t sizes[4] = { 100, 100, 100, 100 };
	const struct call_record *r;
	struct trace_merge *m;
	struct shard_reader *sr;
	char *dir = make_tmpdir();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	char path[512];
	size_t n = 0;

	(void)state;
	memset(recs, 0, sizeof(recs));
	/* Four blocks over the same range: all four must be open at once. */
	for (int b = 0; b < 4; b++)
		for (int i = 0; i < 100; i++)
			recs[b * 100 + i].ts_ns = (uint64_t)i;
	snprintf(path, sizeof(path), "%s/x.shard", dir);
	write_blocks(path, recs, sizes, 4, TRACE_BLOCK_F_LATE, 0);
	m = trace_merge__new(2 * 100 * sizeof(struct call_record));
	assert_int_equal(shard_reader__open(&sr, dfd, "x.shard"), 0);
	assert_int_equal(trace_merge__add_source(m, sr, "x.shard"), 0);
	while (trace_merge__next(m, &r) > 0)
		n++;
	assert_int_equal(n, 200);
	assert_int_equal(trace_merge__nr_damage(m), 2);
	assert_int_equal(trace_merge__damage(m, 0)->d.reason, TRACE_DMG_OVERLAP);
	assert_int_equal(trace_merge__damage(m, 0)->d.records, 100);
	trace_merge__free(m);
	close(dfd);
	remove_tree(dir);
	free(dir);
}

/* An empty trace (no records at all) merges to an empty .dlt that reads back empty. */
static void test_merge_empty(void **state)
{
	struct trace_writer_opts o = { .nr_cpus = 4 };
	char *dir = make_tmpdir(), file[512];
	struct call_record *out;
	size_t n, dmg;

	(void)state;
	assert_int_equal(feed_trace(dir, &o, NULL, 0, 1, 0, 0), 0);
	out = read_trace(dir, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(n, 0);
	assert_int_equal(dmg, 0);
	free(out);
	snprintf(file, sizeof(file), "%s/e.dlt", dir);
	merge_to_dlt(dir, file, TRACE_COMP_ZLIB);
	out = read_trace(file, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(n, 0);
	free(out);
	remove_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_random),
		cmocka_unit_test(test_merge_one_cpu),
		cmocka_unit_test(test_merge_open_blocks_bounded),
		cmocka_unit_test(test_merge_blocks_out_of_order),
		cmocka_unit_test(test_merge_budget),
		cmocka_unit_test(test_merge_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
