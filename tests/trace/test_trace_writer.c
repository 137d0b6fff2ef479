// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recorder's API: directory rules (no link followed, no directory of
 * another's or that others can write to), demux by CPU, metadata refresh,
 * and write errors (a file size limit stands in for a full disk) that are
 * returned, counted, and leave a readable trace.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "trace/trace_input.h"
#include "trace_testutil.h"

static void touch(const char *dir, const char *name)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_directory_rules(void **state)
{
	struct trace_writer_opts o = { .nr_cpus = 2 };
	char *dir = make_tmpdir(), path[512];
	struct trace_writer *w;

	(void)state;
	/* An existing empty directory is fine. */
	w = trace_writer__new(dir, &o);
	assert_non_null(w);
	trace_writer__free(w);
	/* Not empty: refused unless overwrite. */
	assert_null(trace_writer__new(dir, &o));
	assert_int_equal(errno, EEXIST);
	touch(dir, "cpu7.shard");
	touch(dir, "notes.txt");
	o.overwrite = true;
	w = trace_writer__new(dir, &o);
	assert_non_null(w);
	trace_writer__free(w);
	snprintf(path, sizeof(path), "%s/cpu7.shard", dir);
	assert_int_equal(file_size(path), -1);	/* an old trace's shard is gone */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	assert_int_equal(file_size(path), 0);	/* other files are left alone */
	/* A file where the directory should be. */
	snprintf(path, sizeof(path), "%s/notes.txt", dir);
	assert_null(trace_writer__new(path, &o));
	assert_int_equal(errno, ENOTDIR);
	/* Bad options. */
	o.nr_cpus = 0;
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_null(trace_writer__new(path, &o));
	assert_int_equal(errno, EINVAL);
	remove_tree(dir);
	free(dir);
}

/* Nothing is written through a link, nor into a directory others can write to or that is another's. */
static void test_directory_not_foreign(void **state)
{
	static const mode_t open_modes[] = { 0777, 01777, 0775 };
	struct trace_writer_opts o = { .nr_cpus = 2 };
	char *dir = make_tmpdir(), target[512], link[512];
	struct trace_writer *w;

	(void)state;
	snprintf(target, sizeof(target), "%s/target", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	assert_int_equal(mkdir(target, 0755), 0);
	assert_int_equal(symlink(target, link), 0);
	assert_null(trace_writer__new(link, &o));
	assert_int_equal(errno, ELOOP);
	assert_int_equal(rmdir(target), 0);	/* still empty */
	assert_null(trace_writer__new(link, &o));	/* dangling: mkdir does not follow it, neither do we */
	assert_int_equal(errno, ELOOP);
	assert_int_equal(mkdir(target, 0755), 0);
	for (size_t i = 0; i < sizeof(open_modes) / sizeof(open_modes[0]); i++) {
		assert_int_equal(chmod(target, open_modes[i]), 0);
		assert_null(trace_writer__new(target, &o));
		assert_int_equal(errno, EPERM);
	}
	assert_int_equal(chmod(target, 0755), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(target, 65534 /* nobody */, 65534), 0);
		assert_null(trace_writer__new(target, &o));
		assert_int_equal(errno, EPERM);
		assert_int_equal(chown(target, 0, 0), 0);
	}
	assert_int_equal(rmdir(target), 0);	/* nothing was written in it */
	w = trace_writer__new(target, &o);	/* a new directory of one's own */
	assert_non_null(w);
	trace_writer__free(w);
	remove_tree(dir);
	free(dir);
}

static void test_demux_and_meta(void **state)
{
	struct trace_writer_opts o = { .nr_cpus = 3, .mono_start_ns = 1000, .realtime_offset_ns = 5 };
	struct dlprof_diag diag[3] = { { .ringbuf_drops = 1 }, { .ringbuf_drops = 2, .orphan_returns = 4 },
				       { .storage_failed = 8 } };
	struct call_record r = { .type = REC_CALL, .ts_ns = 2000, .dur_ns = 10 };
	char *dir = make_tmpdir(), err[256], line[512];
	struct trace_writer_stats st;
	struct trace_losses l;
	struct trace_input *in;
	struct trace_writer *w;
	const struct trace_meta *m;

	(void)state;
	w = trace_writer__new(dir, &o);
	assert_non_null(w);
	assert_int_equal(trace_meta__add_func(trace_writer__meta(w), "/l.so", "", "f", 1), 0);
	for (uint32_t c = 0; c < 3; c++) {
		r.cpu = c;
		assert_int_equal(trace_writer__add(w, &r), 0);
	}
	r.cpu = 3;
	assert_int_equal(trace_writer__add(w, &r), -ERANGE);
	assert_int_equal(trace_writer__flush(w, 5000, diag), 0);

	/* Mid-recording, meta.json is already a complete, valid file. */
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	m = trace_input__meta(in);
	assert_false(m->ended_cleanly);
	assert_int_equal(m->nr_cpus, 3);
	assert_int_equal(trace_meta__drops(m), 3);
	assert_int_equal(m->orphan_returns, 4);
	assert_int_equal(m->untimed_calls, 8);
	assert_int_equal(m->last_flush_ns, 5000);
	assert_int_equal(m->mono_start_ns, 1000);
	assert_int_equal(m->realtime_offset_ns, 5);
	assert_int_equal(m->nr_funcs, 1);
	/* Read now, it is a recording cut off after its last flush: the gap is said in time. */
	assert_false(m->closed);
	trace_input__losses(in, &l);
	assert_true(trace_losses_describe(&l, line, sizeof(line)));
	assert_non_null(strstr(line, "the recording was cut off (never closed) before it had written a flush "
				     "interval: calls of at most its first 1.1 s were never written"));
	trace_input__free(in);

	assert_int_equal(trace_writer__close(w), 0);
	trace_writer__stats(w, &st);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.records_written, 3);
	assert_int_equal(st.blocks, 3);
	trace_writer__free(w);
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	assert_true(trace_input__meta(in)->ended_cleanly);
	assert_true(trace_input__meta(in)->closed);
	trace_input__free(in);
	trace_writer__free(NULL);
	remove_tree(dir);
	free(dir);
}

/* In a child: a file size limit makes writes fail with EFBIG, as a full disk fails with ENOSPC. */
static int fsize_child(const char *dir)
{
	struct gen_opts g = { .nr_cpus = 2, .nr_calls = 40000, .seed = 4, .max_gap_ns = 1000,
			      .max_dur_ns = 100, .nr_funcs = 3 };
	struct trace_writer_opts o = { .nr_cpus = 2, .no_compress = true,
				       .block_size = 100 * sizeof(struct call_record),
				       .reorder_window_ns = 1000 };
	struct rlimit rl = { 200000, 200000 };
	struct call_record *in = gen_calls(&g);
	struct trace_writer_stats st;
	struct trace_writer *w;
	int err = 0, first = 0;

	signal(SIGXFSZ, SIG_IGN);
	if (setrlimit(RLIMIT_FSIZE, &rl))
		return 10;
	w = trace_writer__new(dir, &o);
	if (!w)
		return 11;
	for (size_t i = 0; i < g.nr_calls; i++) {
		err = trace_writer__add(w, &in[i]);
		if (err && !first)
			first = err;
	}
	err = trace_writer__close(w);
	trace_writer__stats(w, &st);
	trace_writer__free(w);
	/* close may succeed: its last, small blocks can still fit under the limit. */
	if (first != -EFBIG || (err && err != -EFBIG))
		return 12;
	if (!st.records_lost || st.records_lost + st.records_written != g.nr_calls)
		return 13;
	return 0;
}

static void test_write_error(void **state)
{
	char *dir = make_tmpdir(), err[256];
	struct call_record *out;
	struct trace_input *in;
	struct trace_losses l;
	size_t n, dmg;
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	if (!pid)
		_exit(fsize_child(dir));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* What fit is readable: whole blocks, no damage, the loss counted in the metadata. */
	out = read_trace(dir, &n, &dmg);
	assert_non_null(out);
	assert_true(n > 0);
	assert_int_equal(dmg, 0);
	assert_true(ts_ordered(out, n));
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	trace_input__losses(in, &l);
	assert_int_equal(l.write_lost + n, 40000);
	/* Closed, its losses counted, but not clean: even when the close itself wrote all it had left. */
	assert_true(trace_input__meta(in)->closed);
	assert_false(trace_input__meta(in)->ended_cleanly);
	trace_input__free(in);
	free(out);
	remove_tree(dir);
	free(dir);
}

/* Two recordings of two CPUs each, the same calls: b's cpu1.shard moved into a. */
static void test_foreign_shard(void **state)
{
	struct gen_opts g = { .nr_cpus = 2, .nr_calls = 4000, .seed = 9, .max_gap_ns = 1000,
			      .max_dur_ns = 100, .nr_funcs = 3 };
	struct trace_writer_opts o = { .nr_cpus = 2 };
	struct call_record *recs = gen_calls(&g), *out;
	char *dir = make_tmpdir(), a[512], b[512], cmd[1200];
	const struct merge_damage *d;
	const struct call_record *r;
	struct trace_input *in;
	size_t n, dmg, on_cpu0 = 0;

	(void)state;
	snprintf(a, sizeof(a), "%s/a.d", dir);
	snprintf(b, sizeof(b), "%s/b.d", dir);
	assert_int_equal(feed_trace(a, &o, recs, g.nr_calls, 1000000, 3, 0), 0);
	assert_int_equal(feed_trace(b, &o, recs, g.nr_calls, 1000000, 3, 0), 0);
	for (size_t i = 0; i < g.nr_calls; i++)
		on_cpu0 += recs[i].cpu == 0;
	snprintf(cmd, sizeof(cmd), "cp '%s/cpu1.shard' '%s/cpu1.shard'", b, a);
	assert_int_equal(system(cmd), 0);
	/* Refused by name, as a whole; the other shard is still read. */
	out = read_trace(a, &n, &dmg);
	assert_non_null(out);
	assert_int_equal(n, on_cpu0);
	assert_int_equal(dmg, 1);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(out[i].cpu, 0);
	free(out);
	assert_int_equal(trace_input__open(&in, a, cmd, sizeof(cmd)), 0);
	while (trace_input__next(in, &r) > 0)
		;
	d = trace_merge__damage(trace_input__merge(in), 0);
	assert_string_equal(d->source, "cpu1.shard");
	assert_int_equal(d->d.reason, TRACE_DMG_FOREIGN);
	assert_int_equal(d->d.records, g.nr_calls - on_cpu0);
	assert_int_equal(d->d.bytes, file_size(b) > 0 ? d->d.bytes : 0);
	trace_input__free(in);
	free(recs);
	remove_tree(dir);
	free(dir);
}

/* Every metadata write says what each shard holds, so a reader can tell a shard that lost blocks. */
static void test_meta_counts(void **state)
{
	struct trace_writer_opts o = { .nr_cpus = 2, .block_size = 10 * sizeof(struct call_record),
				       .reorder_window_ns = 1 };
	struct trace_writer_stats st;
	struct call_record r = { .type = REC_CALL, .ts_ns = 2000, .dur_ns = 10, .cpu = 1 };
	char *dir = make_tmpdir(), err[256];
	struct trace_input *in;
	struct trace_writer *w;
	const struct trace_meta *m;
	uint64_t id;

	(void)state;
	w = trace_writer__new(dir, &o);
	assert_non_null(w);
	id = trace_writer__meta(w)->recording_id;
	for (int i = 0; i < 25; i++, r.ts_ns += 100)
		assert_int_equal(trace_writer__add(w, &r), 0);
	assert_int_equal(trace_writer__flush(w, 0, NULL), 0);
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	m = trace_input__meta(in);
	assert_true(m->recording_id == id);
	assert_int_equal(m->cpus[0].blocks, 0);
	assert_int_equal(m->cpus[0].records, 0);
	trace_writer__stats(w, &st);
	assert_true(st.blocks >= 2);
	assert_int_equal(m->cpus[1].blocks, st.blocks);
	assert_int_equal(m->cpus[1].records, st.records_written);
	trace_input__free(in);
	assert_int_equal(trace_writer__close(w), 0);
	trace_writer__free(w);
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	m = trace_input__meta(in);
	assert_int_equal(m->cpus[1].blocks, 3);
	assert_int_equal(m->cpus[1].records, 25);
	assert_int_equal(trace_merge__nr_damage(trace_input__merge(in)), 0);
	trace_input__free(in);
	remove_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_directory_rules),
		cmocka_unit_test(test_directory_not_foreign),
		cmocka_unit_test(test_demux_and_meta),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_foreign_shard),
		cmocka_unit_test(test_meta_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
