// SPDX-License-Identifier: GPL-2.0-only
/* Blocks and shards: what is written reads back the same, compressed or not. */
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

#include "trace/shard_reader.h"
#include "trace/shard_writer.h"
#include "trace/trace_block.h"
#include "trace_testutil.h"

static void test_compression_parse(void **state)
{
	enum trace_compression c;
	int level;

	(void)state;
	assert_int_equal(trace_compression_parse("none", &c, &level), 0);
	assert_int_equal(c, TRACE_COMP_NONE);
	assert_int_equal(trace_compression_parse("zlib", &c, &level), 0);
	assert_int_equal(c, TRACE_COMP_ZLIB);
	assert_int_equal(level, TRACE_ZLIB_LEVEL_DEFAULT);
	assert_int_equal(trace_compression_parse("zlib:9", &c, &level), 0);
	assert_int_equal(level, 9);
	assert_int_equal(trace_compression_parse("zlib:0", &c, &level), -EINVAL);
	assert_int_equal(trace_compression_parse("zlib:10", &c, &level), -EINVAL);
	assert_int_equal(trace_compression_parse("lz4", &c, &level), -EINVAL);
}

static struct call_record *sorted_recs(size_t n, uint64_t seed)
{
	struct gen_opts g = { .nr_cpus = 1, .nr_calls = n, .seed = seed, .max_gap_ns = 5000,
			      .max_dur_ns = 3000, .nr_funcs = 7, .nr_events = 2 };
	struct call_record *r = gen_calls(&g);

	sort_records(r, n);
	return r;
}

static void block_roundtrip(enum trace_compression comp)
{
	struct call_record *in = sorted_recs(777, 3), *out = calloc(777, sizeof(*out));
	struct block_encoder *e = block_encoder__new(comp, 0);
	struct block_decoder *d = block_decoder__new();
	struct trace_block_header h;
	const unsigned char *buf;
	size_t len;

	assert_non_null(e);
	assert_non_null(d);
	assert_int_equal(block_encoder__encode(e, in, 777, TRACE_BLOCK_F_LATE,
					       (const void **)&buf, &len), 0);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(block_header_check(&h), TRACE_DMG_NONE);
	assert_int_equal(h.nr_records, 777);
	assert_int_equal(h.flags, TRACE_BLOCK_F_LATE);
	assert_int_equal(h.compression, comp);
	assert_true(h.payload_len <= h.raw_len);
	if (comp == TRACE_COMP_ZLIB)
		assert_true(h.payload_len < h.raw_len / 2);
	assert_int_equal(len, sizeof(h) + h.payload_len);
	assert_int_equal(block_decoder__decode(d, &h, buf + sizeof(h), out), TRACE_DMG_NONE);
	assert_memory_equal(in, out, 777 * sizeof(*in));

	/* Unsorted input is refused: blocks are sorted by contract. */
	in[5].ts_ns = in[4].ts_ns - 1;
	assert_int_equal(block_encoder__encode(e, in, 777, 0, (const void **)&buf, &len), -EINVAL);
	block_encoder__free(e);
	block_decoder__free(d);
	free(in);
	free(out);
}

static void test_block_roundtrip_zlib(void **state)
{
	(void)state;
	block_roundtrip(TRACE_COMP_ZLIB);
}

static void test_block_roundtrip_none(void **state)
{
	(void)state;
	block_roundtrip(TRACE_COMP_NONE);
}

/* Data zlib cannot shrink is stored raw, so payload_len <= raw_len always holds. */
static void test_block_incompressible(void **state)
{
	struct call_record *in = calloc(64, sizeof(*in)), out[64];
	struct block_encoder *e = block_encoder__new(TRACE_COMP_ZLIB, 9);
	struct block_decoder *d = block_decoder__new();
	struct trace_block_header h;
	const unsigned char *buf;
	uint64_t s = 99;
	size_t len;

	(void)state;
	for (int i = 0; i < 64; i++)
		for (size_t b = 0; b < sizeof(in[i]); b += 8) {
			uint64_t v = rnd(&s);

			memcpy((char *)&in[i] + b, &v, 8);
		}
	/* Random timestamps too, only put in order. */
	for (int i = 1; i < 64; i++)
		for (int j = i; j > 0 && in[j].ts_ns < in[j - 1].ts_ns; j--) {
			uint64_t t = in[j].ts_ns;

			in[j].ts_ns = in[j - 1].ts_ns;
			in[j - 1].ts_ns = t;
		}
	assert_int_equal(block_encoder__encode(e, in, 64, 0, (const void **)&buf, &len), 0);
	memcpy(&h, buf, sizeof(h));
	assert_int_equal(h.compression, TRACE_COMP_NONE);
	assert_int_equal(h.payload_len, h.raw_len);
	assert_int_equal(block_decoder__decode(d, &h, buf + sizeof(h), out), TRACE_DMG_NONE);
	assert_memory_equal(in, out, sizeof(out));
	block_encoder__free(e);
	block_decoder__free(d);
	free(in);
}

/* Reads every block of a shard; returns the records, checks normal blocks only grow. */
static struct call_record *read_shard(const char *dir, const char *name, size_t *n,
				      size_t *late_blocks)
{
	struct shard_reader *r;
	struct call_record *all = NULL;
	uint64_t last_normal = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	*n = 0;
	*late_blocks = 0;
	assert_true(dfd >= 0);
	assert_int_equal(shard_reader__open(&r, dfd, name), 0);
	assert_int_equal(shard_reader__stop(r)->reason, TRACE_DMG_NONE);
	assert_non_null(shard_reader__header(r));
	for (size_t i = 0; i < shard_reader__nr_blocks(r); i++) {
		const struct block_ref *b = shard_reader__block(r, i);

		all = realloc(all, (*n + b->h.nr_records) * sizeof(*all));
		assert_int_equal(shard_reader__read_block(r, i, all + *n), TRACE_DMG_NONE);
		*n += b->h.nr_records;
		if (b->h.flags & TRACE_BLOCK_F_LATE) {
			(*late_blocks)++;
			continue;
		}
		assert_true(b->h.first_ts_ns >= last_normal);
		last_normal = b->h.last_ts_ns;
	}
	shard_reader__free(r);
	close(dfd);
	return all;
}

static void shard_roundtrip(enum trace_compression comp, unsigned long_permille)
{
	struct gen_opts g = { .nr_cpus = 1, .nr_calls = 20000, .seed = 11 + long_permille,
			      .max_gap_ns = 2000, .max_dur_ns = 50000,
			      .long_permille = long_permille, .long_dur_ns = 5000000,
			      .nr_funcs = 9, .nr_events = 3 };
	struct shard_writer_opts o = { .compression = comp, .block_records = 500,
				       .max_held = 100000, .reorder_window_ns = 1000000 };
	struct call_record *in = gen_calls(&g), *out;
	struct shard_writer_stats st;
	struct shard_writer *w;
	char *dir = make_tmpdir(), path[512];
	size_t n, late;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	w = shard_writer__new(dfd, "cpu0.shard", &o);
	assert_non_null(w);
	for (size_t i = 0; i < g.nr_calls; i++) {
		assert_int_equal(shard_writer__add(w, &in[i]), 0);
		if (i % 3000 == 0)
			assert_int_equal(shard_writer__flush(w, in[i].ts_ns + in[i].dur_ns), 0);
	}
	assert_int_equal(shard_writer__close(w), 0);
	shard_writer__stats(w, &st);
	shard_writer__free(w);
	assert_int_equal(st.records, g.nr_calls);
	assert_int_equal(st.records_written, g.nr_calls);
	snprintf(path, sizeof(path), "%s/cpu0.shard", dir);
	assert_int_equal(st.bytes, file_size(path));

	out = read_shard(dir, "cpu0.shard", &n, &late);
	assert_int_equal(n, g.nr_calls);
	/* Calls within the window never go late; longer ones do. */
	if (!long_permille)
		assert_int_equal(st.late_records, 0);
	else
		assert_true(st.late_records > 0);
	assert_int_equal(late, st.late_blocks);
	sort_records(in, n);
	sort_records(out, n);
	assert_memory_equal(in, out, n * sizeof(*in));
	free(in);
	free(out);
	close(dfd);
	remove_tree(dir);
	free(dir);
}

static void test_shard_roundtrip_zlib(void **state)
{
	(void)state;
	shard_roundtrip(TRACE_COMP_ZLIB, 0);
}

static void test_shard_roundtrip_none(void **state)
{
	(void)state;
	shard_roundtrip(TRACE_COMP_NONE, 0);
}

static void test_shard_roundtrip_long_calls(void **state)
{
	(void)state;
	shard_roundtrip(TRACE_COMP_ZLIB, 20);
}

/* A window that is always full still writes every record, in order or late. */
static void test_shard_window_full(void **state)
{
	struct gen_opts g = { .nr_cpus = 1, .nr_calls = 5000, .seed = 5, .max_gap_ns = 100,
			      .max_dur_ns = 100000, .nr_funcs = 2 };
	struct shard_writer_opts o = { .compression = TRACE_COMP_ZLIB, .block_records = 100,
				       .max_held = 16, .reorder_window_ns = 1000000000 };
	struct call_record *in = gen_calls(&g), *out;
	struct shard_writer *w;
	char *dir = make_tmpdir();
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);
	size_t n, late;

	(void)state;
	w = shard_writer__new(dfd, "cpu0.shard", &o);
	for (size_t i = 0; i < g.nr_calls; i++)
		assert_int_equal(shard_writer__add(w, &in[i]), 0);
	assert_int_equal(shard_writer__close(w), 0);
	shard_writer__free(w);
	out = read_shard(dir, "cpu0.shard", &n, &late);
	assert_int_equal(n, g.nr_calls);
	sort_records(in, n);
	sort_records(out, n);
	assert_memory_equal(in, out, n * sizeof(*in));
	free(in);
	free(out);
	close(dfd);
	remove_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compression_parse),
		cmocka_unit_test(test_block_roundtrip_zlib),
		cmocka_unit_test(test_block_roundtrip_none),
		cmocka_unit_test(test_block_incompressible),
		cmocka_unit_test(test_shard_roundtrip_zlib),
		cmocka_unit_test(test_shard_roundtrip_none),
		cmocka_unit_test(test_shard_roundtrip_long_calls),
		cmocka_unit_test(test_shard_window_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
