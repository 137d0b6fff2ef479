// SPDX-License-Identifier: GPL-2.0-only
/*
 * Usage: comp_driver SPIN_NS INNER CALLS [stepped]
 * Sizes comp_outer's spinning to ~SPIN_NS in all, around INNER calls of
 * comp_inner; prints "ready PID"; on a line on stdin makes CALLS calls of
 * comp_outer (a profiler attached meanwhile), each beside a call of its
 * unprobed twin (twin_outer: the same code, linked into this executable),
 * prints "done", then "unprobed_ns N probed_ns M single_ns S" (the
 * medians; S is the twin timed call by call like the probed calls, so M - S
 * is what the probes cost with the clock's cost cancelled, as the
 * profiler's calibration measures them), and exits on the next line. With
 * "stepped", the same with comp_stepped, a loop of ~SPIN_NS whose entry
 * the kernel single-steps (INNER is not used). With
 * "leaf", the same with comp_leaf, a loop of ~SPIN_NS (tens of ns) whose
 * entry the kernel emulates; its twin is timed over batches of calls, so
 * the clock's own cost (as long as such a call) stays out of its time. The test compares the profiler's compensated latency
 * with the twin's median: timed call by call beside the probed calls, it
 * sees the same CPU speed, which a VM's vCPU changes from second to second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int comp_outer(unsigned long spin_iters, int n);
int twin_outer(unsigned long spin_iters, int n);
unsigned long comp_stepped(unsigned long n);
unsigned long twin_stepped(unsigned long n);
unsigned long comp_leaf(unsigned long n);
unsigned long twin_leaf(unsigned long n);

/* Twin calls per timed batch in "leaf" mode: the clock's cost is a hundredth of the batch's. */
#define LEAF_BATCH 100

static int stepped(unsigned long iters, int n)
{
	(void)n;
	return (int)comp_stepped(iters ?: 1);
}

static int stepped_twin(unsigned long iters, int n)
{
	(void)n;
	return (int)twin_stepped(iters ?: 1);
}

static int leaf(unsigned long iters, int n)
{
	(void)n;
	return (int)comp_leaf(iters ?: 1);
}

static int leaf_twin(unsigned long iters, int n)
{
	(void)n;
	return (int)twin_leaf(iters ?: 1);
}

static unsigned long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long median(unsigned long long *w, int n)
{
	qsort(w, (size_t)n, sizeof(*w), cmp);
	return w[n / 2];
}

static unsigned long long timed_call(int (*outer)(unsigned long, int), unsigned long iters, int inner)
{
	unsigned long long t0 = mono_ns();

	outer(iters, inner);
	return mono_ns() - t0;
}

/* One call's time, from a batch of batch calls (the clock read once per batch). */
static unsigned long long timed_batch(int (*outer)(unsigned long, int), unsigned long iters, int inner, int batch)
{
	unsigned long long t0 = mono_ns();

	for (int i = 0; i < batch; i++)
		outer(iters, inner);
	return (mono_ns() - t0) / (unsigned long long)batch;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(0);
}

int main(int argc, char **argv)
{
	unsigned long long spin_ns, *probed, *twin, *single, sizing[9];
	unsigned long iters = 100000;
	int inner, calls, batch = 1;

	int (*outer)(unsigned long, int) = comp_outer, (*twin_of)(unsigned long, int) = twin_outer;

	if (argc == 5 && !strcmp(argv[4], "stepped")) {
		outer = stepped;
		twin_of = stepped_twin;
	} else if (argc == 5 && !strcmp(argv[4], "leaf")) {
		outer = leaf;
		twin_of = leaf_twin;
		batch = LEAF_BATCH;
		iters = 1000;
	} else if (argc != 4) {
		return 2;
	}
	spin_ns = strtoull(argv[1], NULL, 10);
	inner = atoi(argv[2]);
	calls = atoi(argv[3]);
	probed = calloc(calls > 0 ? (size_t)calls : 1, sizeof(*probed));
	twin = calloc(calls > 0 ? (size_t)calls : 1, sizeof(*twin));
	single = calloc(calls > 0 ? (size_t)calls : 1, sizeof(*single));
	if (inner < 1 || calls < 1 || !probed || !twin || !single)
		return 2;
	/*
	 * Iterations per chunk for ~spin_ns in all: from the median of a few
	 * timed runs (of ten batches each for a leaf: a few microseconds would
	 * catch the vCPU in whatever state it was).
	 */
	for (int i = 0; i < 9; i++)
		sizing[i] = timed_batch(twin_of, iters, 1, batch > 1 ? batch * 10 : 1);
	iters = (unsigned long)((double)iters * (double)spin_ns / (double)inner /
				(double)(median(sizing, 9) ?: 1));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_line();
	for (int i = 0; i < calls; i++) {
		probed[i] = timed_call(outer, iters, inner);
		single[i] = timed_call(twin_of, iters, inner);
		twin[i] = batch > 1 ? timed_batch(twin_of, iters, inner, batch) : single[i];
	}
	printf("done\nunprobed_ns %llu probed_ns %llu single_ns %llu\n", median(twin, calls), median(probed, calls),
	       median(single, calls));
	fflush(stdout);
	wait_line();
	free(probed);
	free(twin);
	free(single);
	return 0;
}
