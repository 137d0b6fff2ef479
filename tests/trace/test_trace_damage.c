// SPDX-License-Identifier: GPL-2.0-only
/*
 * Recovery: a shard cut at any length (a block boundary and zero
 * included), or with any one bit flipped, gives back every intact block
 * before the damage and reports the rest, with the records the metadata
 * says are gone; empty and header-only shards are valid and empty when the
 * metadata counted nothing in them; hostile lengths are refused.
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

#include "trace/shard_reader.h"
#include "trace/trace_block.h"
#include "trace/trace_input.h"
#include "trace_testutil.h"

#define NR_CALLS 3000
#define BLOCK_RECORDS 250

struct fixture {
	char *dir;
	char shard[512];
	unsigned char *orig;		/* the pristine cpu0.shard */
	size_t orig_len;
	struct call_record *recs;	/* all records, canonical order */
	/* per block, from the pristine index */
	size_t nr_blocks;
	uint64_t off[64];
	uint64_t end[64];
	uint32_t nrec[64];
	size_t before[64];		/* records in blocks before this one */
};

static void write_file(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

static int setup(void **state)
{
	struct gen_opts g = { .nr_cpus = 1, .nr_calls = NR_CALLS, .seed = 21, .max_gap_ns = 1000,
			      .max_dur_ns = 500, .nr_funcs = 5, .nr_events = 1 };
	struct trace_writer_opts o = { .nr_cpus = 1,
				       .block_size = BLOCK_RECORDS * sizeof(struct call_record),
				       .reorder_window_ns = 1000000000 };
	struct fixture *f = calloc(1, sizeof(*f));
	struct shard_reader *r;
	FILE *fp;
	int dfd;

	f->dir = make_tmpdir();
	f->recs = gen_calls(&g);
	/* One CPU, a huge window: blocks in order, none late, so damage maps to a record prefix. */
	assert_int_equal(feed_trace(f->dir, &o, f->recs, NR_CALLS, UINT64_MAX / 2, 5, 1), 0);
	sort_records(f->recs, NR_CALLS);
	snprintf(f->shard, sizeof(f->shard), "%s/cpu0.shard", f->dir);
	f->orig_len = (size_t)file_size(f->shard);
	f->orig = malloc(f->orig_len);
	fp = fopen(f->shard, "r");
	assert_int_equal(fread(f->orig, 1, f->orig_len, fp), f->orig_len);
	fclose(fp);

	dfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(shard_reader__open(&r, dfd, "cpu0.shard"), 0);
	f->nr_blocks = shard_reader__nr_blocks(r);
	assert_int_equal(f->nr_blocks, NR_CALLS / BLOCK_RECORDS);
	for (size_t i = 0, acc = 0; i < f->nr_blocks; i++) {
		const struct block_ref *b = shard_reader__block(r, i);

		assert_int_equal(b->h.flags & TRACE_BLOCK_F_LATE, 0);
		f->off[i] = b->offset;
		f->end[i] = b->offset + sizeof(b->h) + b->h.payload_len;
		f->nrec[i] = b->h.nr_records;
		f->before[i] = acc;
		acc += b->h.nr_records;
	}
	assert_int_equal(f->end[f->nr_blocks - 1], f->orig_len);
	shard_reader__free(r);
	close(dfd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree(f->dir);
	free(f->dir);
	free(f->orig);
	free(f->recs);
	free(f);
	return 0;
}

/* Reads the trace dir; checks it yields exactly the first `want` records (canonical order). */
static void expect_prefix(struct fixture *f, size_t want, size_t want_damage)
{
	struct call_record *out;
	size_t n, dmg;

	out = read_trace(f->dir, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(n, want);
	assert_int_equal(dmg, want_damage);
	assert_true(ts_ordered(out, n));
	/* Blocks are sorted by ts and consecutive, so a prefix of blocks is a prefix of records. */
	assert_memory_equal(out, f->recs, n * sizeof(*out));
	free(out);
}

static size_t records_before_offset(struct fixture *f, uint64_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nr_blocks; i++)
		if (f->end[i] <= len)
			n = f->before[i] + f->nrec[i];
	return n;
}

static void test_pristine(void **state)
{
	struct fixture *f = *state;

	expect_prefix(f, NR_CALLS, 0);
}

static void test_truncated(void **state)
{
	struct fixture *f = *state;
	uint64_t s = 5;

	/* A spread of lengths inside headers and payloads: every cut is one damaged place. */
	for (int k = 0; k < 120; k++) {
		uint64_t len = k < 60 ? rnd(&s) % f->orig_len : f->orig_len - (uint64_t)k * 7;
		size_t want;

		write_file(f->shard, f->orig, len);
		want = len < sizeof(struct trace_shard_header) ? 0 : records_before_offset(f, len);
		expect_prefix(f, want, 1);
	}
	write_file(f->shard, f->orig, f->orig_len);
}

static void test_bitflips(void **state)
{
	struct fixture *f = *state;
	unsigned char *buf = malloc(f->orig_len);
	uint64_t s = 17;

	for (int k = 0; k < 300; k++) {
		uint64_t pos = k < 64 ? (uint64_t)k : rnd(&s) % f->orig_len;
		size_t want = 0, blk = 0;

		memcpy(buf, f->orig, f->orig_len);
		buf[pos] ^= (unsigned char)(1u << (rnd(&s) % 8));
		write_file(f->shard, buf, f->orig_len);
		if (pos < sizeof(struct trace_shard_header)) {
			/* The shard header, all of it under its CRC: the whole shard is skipped. */
			expect_prefix(f, want, 1);
			continue;
		}
		while (pos >= f->end[blk])
			blk++;
		if (pos < f->off[blk] + sizeof(struct trace_block_header) &&
		    pos < f->off[blk] + offsetof(struct trace_block_header, reserved2)) {
			/* A block header: nothing after it can be found any more. */
			expect_prefix(f, f->before[blk], 1);
		} else if (pos < f->off[blk] + sizeof(struct trace_block_header)) {
			/* reserved2 is outside the CRC and unused. */
			expect_prefix(f, NR_CALLS, 0);
		} else {
			/* A payload: that block alone is lost, its header still leads to the next. */
			struct call_record *out;
			size_t n, dmg;

			out = read_trace(f->dir, &n, &dmg);
			assert_int_equal(n, NR_CALLS - f->nrec[blk]);
			assert_int_equal(dmg, 1);
			assert_true(ts_ordered(out, n));
			assert_memory_equal(out, f->recs, f->before[blk] * sizeof(*out));
			assert_memory_equal(out + f->before[blk], f->recs + f->before[blk] + f->nrec[blk],
					    (n - f->before[blk]) * sizeof(*out));
			free(out);
		}
	}
	write_file(f->shard, f->orig, f->orig_len);
	free(buf);
}

/* The one damaged place of the trace: its reason, and the records known lost. */
static void expect_damage(struct fixture *f, enum trace_damage_reason why, uint64_t records)
{
	const struct merge_damage *d;
	const struct call_record *r;
	struct trace_input *in;
	struct trace_losses l;
	char err[256], line[512];

	assert_int_equal(trace_input__open(&in, f->dir, err, sizeof(err)), 0);
	/* The recording ended cleanly: that must not hide the gap. */
	assert_true(trace_input__meta(in)->ended_cleanly);
	while (trace_input__next(in, &r) > 0)
		;
	assert_int_equal(trace_merge__nr_damage(trace_input__merge(in)), 1);
	d = trace_merge__damage(trace_input__merge(in), 0);
	assert_string_equal(d->source, "cpu0.shard");
	assert_int_equal(d->d.reason, why);
	assert_int_equal(d->d.records, records);
	trace_input__losses(in, &l);
	assert_true(trace_losses_describe(&l, line, sizeof(line)));
	assert_non_null(strstr(line, "1 damaged part skipped"));
	trace_input__free(in);
}

/* Cut exactly after a block: nothing in the file looks wrong, the metadata's counts tell. */
static void test_cut_at_block_boundary(void **state)
{
	struct fixture *f = *state;

	for (size_t i = 0; i + 1 < f->nr_blocks; i++) {
		write_file(f->shard, f->orig, f->end[i]);
		expect_prefix(f, f->before[i] + f->nrec[i], 1);
		expect_damage(f, TRACE_DMG_SHORT, NR_CALLS - f->before[i] - f->nrec[i]);
	}
	/* The header alone, and no file content at all: every record is missing. */
	write_file(f->shard, f->orig, sizeof(struct trace_shard_header));
	expect_prefix(f, 0, 1);
	expect_damage(f, TRACE_DMG_SHORT, NR_CALLS);
	write_file(f->shard, f->orig, 0);
	expect_prefix(f, 0, 1);
	expect_damage(f, TRACE_DMG_SHORT, NR_CALLS);
	/* Cut inside a block: the cut is the damage, the records lost are the metadata's. */
	write_file(f->shard, f->orig, f->end[3] - 1);
	expect_damage(f, TRACE_DMG_TRUNCATED, NR_CALLS - f->before[3]);
	write_file(f->shard, f->orig, f->orig_len);
}

/* Empty and header-only shards are valid where the metadata counted no block in them. */
static void test_empty_and_header_only(void **state)
{
	struct trace_writer_opts o = { .nr_cpus = 1 };
	struct call_record *out;
	char *dir = make_tmpdir(), shard[512];
	size_t n, dmg;

	(void)state;
	assert_int_equal(feed_trace(dir, &o, NULL, 0, 1, 1, 0), 0);
	snprintf(shard, sizeof(shard), "%s/cpu0.shard", dir);
	assert_int_equal(file_size(shard), sizeof(struct trace_shard_header));
	out = read_trace(dir, &n, &dmg);
	assert_int_equal(n + dmg, 0);
	free(out);
	assert_int_equal(truncate(shard, 0), 0);
	out = read_trace(dir, &n, &dmg);
	assert_int_equal(n + dmg, 0);
	free(out);
	remove_tree(dir);
	free(dir);
}

/* Rewrites block blk's header through fn, with a valid header CRC: only the lengths lie. */
static void forge_header(struct fixture *f, size_t blk, void (*fn)(struct trace_block_header *))
{
	unsigned char *buf = malloc(f->orig_len);
	struct trace_block_header h;

	memcpy(buf, f->orig, f->orig_len);
	memcpy(&h, buf + f->off[blk], sizeof(h));
	fn(&h);
	h.header_crc = trace_crc(&h, offsetof(struct trace_block_header, header_crc));
	memcpy(buf + f->off[blk], &h, sizeof(h));
	write_file(f->shard, buf, f->orig_len);
	free(buf);
}

static void huge_payload(struct trace_block_header *h) { h->payload_len = 0xffffffffu; }
static void huge_count(struct trace_block_header *h)
{
	h->nr_records = 0x40000000u;
	h->raw_len = h->nr_records * TRACE_RECORD_SIZE;
}
static void zero_count(struct trace_block_header *h) { h->nr_records = 0; h->raw_len = 0; }
static void ts_backwards(struct trace_block_header *h) { h->first_ts_ns = h->last_ts_ns + 1; }
static void bad_compression(struct trace_block_header *h) { h->compression = 7; }
static void payload_past_eof(struct trace_block_header *h) { h->payload_len = h->raw_len; }
static void lying_raw_len(struct trace_block_header *h)
{
	/* Consistent header, wrong claim: the payload inflates to more than raw_len. */
	h->nr_records -= 1;
	h->raw_len = h->nr_records * TRACE_RECORD_SIZE;
}
static void lying_last_ts(struct trace_block_header *h) { h->last_ts_ns += 1; }

static void test_hostile_lengths(void **state)
{
	static void (*const header_breakers[])(struct trace_block_header *) = {
		huge_payload, huge_count, zero_count, ts_backwards, bad_compression,
	};
	struct fixture *f = *state;
	size_t last = f->nr_blocks - 1;

	for (size_t i = 0; i < sizeof(header_breakers) / sizeof(header_breakers[0]); i++) {
		forge_header(f, 3, header_breakers[i]);
		expect_prefix(f, f->before[3], 1);
	}
	/* The last block claims more payload than the file has: cut short. */
	forge_header(f, last, payload_past_eof);
	expect_prefix(f, f->before[last], 1);
	/* Sound headers over payloads that do not match them: that block only. */
	forge_header(f, last, lying_raw_len);
	/* Its header also counts a record less than the metadata does: a second place says so. */
	expect_prefix(f, f->before[last], 2);
	forge_header(f, last, lying_last_ts);
	expect_prefix(f, f->before[last], 1);
	write_file(f->shard, f->orig, f->orig_len);
}

/* The damage record names the place: offset and bytes up to the end of the shard. */
static void test_damage_report(void **state)
{
	struct fixture *f = *state;
	const struct merge_damage *d;
	const struct call_record *r;
	struct trace_input *in;
	struct trace_losses l;
	unsigned char *buf = malloc(f->orig_len);
	char err[256], line[512];

	memcpy(buf, f->orig, f->orig_len);
	buf[f->off[5] + 1] ^= 0x10;	/* block 5's magic */
	write_file(f->shard, buf, f->orig_len);
	assert_int_equal(trace_input__open(&in, f->dir, err, sizeof(err)), 0);
	while (trace_input__next(in, &r) > 0)
		;
	assert_int_equal(trace_merge__nr_damage(trace_input__merge(in)), 1);
	d = trace_merge__damage(trace_input__merge(in), 0);
	assert_string_equal(d->source, "cpu0.shard");
	assert_int_equal(d->d.reason, TRACE_DMG_BAD_MAGIC);
	assert_int_equal(d->d.offset, f->off[5]);
	assert_int_equal(d->d.bytes, f->orig_len - f->off[5]);
	trace_input__losses(in, &l);
	assert_int_equal(l.damaged, 1);
	assert_true(trace_losses_describe(&l, line, sizeof(line)));
	assert_non_null(strstr(line, "1 damaged part skipped"));
	trace_input__free(in);
	write_file(f->shard, f->orig, f->orig_len);
	free(buf);
}

/* Random bytes of every length up to a few KiB: never a crash, never a record. */
static void test_garbage(void **state)
{
	struct fixture *f = *state;
	unsigned char buf[4096];
	uint64_t s = 3;

	for (int k = 0; k < 200; k++) {
		size_t len = (size_t)(rnd(&s) % sizeof(buf));

		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)rnd(&s);
		/* Half of them start with a valid header, to get past it. */
		if (k & 1 && len >= sizeof(struct trace_shard_header))
			memcpy(buf, f->orig, sizeof(struct trace_shard_header));
		write_file(f->shard, buf, len);
		expect_prefix(f, 0, 1);
	}
	write_file(f->shard, f->orig, f->orig_len);
}

/* A shard the metadata promises but that is gone: reported, the other shards still read. */
static void test_missing_shard(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(unlink(f->shard), 0);
	expect_prefix(f, 0, 1);
	expect_damage(f, TRACE_DMG_MISSING, NR_CALLS);
	write_file(f->shard, f->orig, f->orig_len);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pristine),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bitflips),
		cmocka_unit_test(test_cut_at_block_boundary),
		cmocka_unit_test(test_empty_and_header_only),
		cmocka_unit_test(test_hostile_lengths),
		cmocka_unit_test(test_damage_report),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_missing_shard),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
