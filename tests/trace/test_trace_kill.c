// SPDX-License-Identifier: GPL-2.0-only
/*
 * A writer killed with SIGKILL while it writes: every record it had
 * flushed before is readable afterwards, the metadata says the recording
 * did not end cleanly, and at most a cut tail per shard is reported.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "trace/trace_input.h"
#include "trace_testutil.h"

#define NR_CPUS 4
#define BATCH 5000
#define WINDOW_NS 1000000ull

/* Batch b of the endless stream: in ts order, so a flush past the window writes all of it. */
static void make_batch(struct call_record *r, uint64_t b)
{
	for (uint64_t i = 0; i < BATCH; i++) {
		uint64_t seq = b * BATCH + i;

		memset(&r[i], 0, sizeof(r[i]));
		r[i].type = REC_CALL;
		r[i].cpu = (uint32_t)(seq % NR_CPUS);
		r[i].ts_ns = 1000000000ull + seq * 1000;
		r[i].dur_ns = seq % 700;
		r[i].func_id = (uint32_t)(seq % 3);
		r[i].pid = 7;
		r[i].tid = 7;
		r[i].counters[DLPROF_MAX_EVENTS - 1] = seq;
	}
}

static void child(const char *dir, int ack_fd)
{
	struct trace_writer_opts o = { .nr_cpus = NR_CPUS,
				       .block_size = 700 * sizeof(struct call_record),
				       .reorder_window_ns = WINDOW_NS };
	struct call_record *r = malloc(BATCH * sizeof(*r));
	struct trace_writer *w = trace_writer__new(dir, &o);

	if (!w || !r)
		_exit(1);
	for (uint32_t f = 0; f < 3; f++)
		trace_meta__add_func(trace_writer__meta(w), "/lib/libk.so", NULL, "f", f);
	for (uint64_t b = 0;; b++) {
		make_batch(r, b);
		for (int i = 0; i < BATCH; i++)
			if (trace_writer__add(w, &r[i]))
				_exit(2);
		/* now past the window: everything added so far goes out in whole blocks */
		if (trace_writer__flush(w, r[BATCH - 1].ts_ns + 2 * WINDOW_NS, NULL))
			_exit(3);
		if (write(ack_fd, &b, sizeof(b)) != sizeof(b))
			_exit(4);
	}
}

static void test_sigkill(void **state)
{
	char *dir = make_tmpdir(), meta_path[512];
	struct call_record *out, *want;
	struct trace_input *in;
	uint64_t acked = 0, b;
	int fds[2], status;
	size_t n, dmg;
	pid_t pid;
	char err[256];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		close(fds[0]);
		child(dir, fds[1]);
	}
	close(fds[1]);
	/* Let it get well into the run, then kill it while it keeps writing. */
	while (read(fds[0], &b, sizeof(b)) == sizeof(b)) {
		acked = b + 1;
		if (acked == 40)
			break;
	}
	assert_int_equal(acked, 40);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	/* Batches acknowledged after the 40th read may have landed too. */
	while (read(fds[0], &b, sizeof(b)) == sizeof(b))
		acked = b + 1;
	close(fds[0]);

	out = read_trace(dir, &n, &dmg);
	assert_non_null(out);
	assert_true(n >= acked * BATCH);
	assert_true(dmg <= NR_CPUS);	/* a cut last block per shard at most */
	assert_true(ts_ordered(out, n));
	want = malloc(acked * BATCH * sizeof(*want));
	for (b = 0; b < acked; b++)
		make_batch(want + b * BATCH, b);
	/* The stream is in ts order with unique ts: the flushed part is an exact prefix. */
	assert_memory_equal(out, want, acked * BATCH * sizeof(*out));
	/* Past it, whatever landed is whole records of the stream, each once. */
	for (size_t i = acked * BATCH; i < n; i++)
		assert_true(out[i].counters[DLPROF_MAX_EVENTS - 1] >
			    out[i - 1].counters[DLPROF_MAX_EVENTS - 1]);

	snprintf(meta_path, sizeof(meta_path), "%s/meta.json", dir);
	assert_true(file_size(meta_path) > 0);
	assert_int_equal(trace_input__open(&in, dir, err, sizeof(err)), 0);
	assert_false(trace_input__meta(in)->ended_cleanly);
	assert_int_equal(trace_input__meta(in)->nr_funcs, 3);
	trace_input__free(in);
	free(out);
	free(want);
	remove_tree(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
