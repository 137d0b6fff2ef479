// SPDX-License-Identifier: GPL-2.0-only
/*
 * Usage: comp_driver SPIN_NS INNER CALLS
 * Sizes comp_outer's spinning to ~SPIN_NS in all, around INNER calls of
 * comp_inner; measures CALLS calls unprobed and prints the median
 * ("unprobed_ns N"), then "ready PID"; on a line on stdin makes CALLS calls
 * again (a profiler attached meanwhile; their median on stderr), prints
 * "done", and exits on the
 * next line. The test compares the profiler's compensated latency with
 * the unprobed median.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int comp_outer(unsigned long spin_iters, int n);

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

static unsigned long long median_of_calls(unsigned long iters, int inner, int calls)
{
	unsigned long long *w = calloc((size_t)calls, sizeof(*w)), m;

	if (!w)
		exit(3);
	for (int i = 0; i < calls; i++) {
		unsigned long long t0 = mono_ns();

		comp_outer(iters, inner);
		w[i] = mono_ns() - t0;
	}
	qsort(w, (size_t)calls, sizeof(*w), cmp);
	m = w[calls / 2];
	free(w);
	return m;
}

static void wait_line(void)
{
	char line[64];

	if (!fgets(line, sizeof(line), stdin))
		exit(0);
}

int main(int argc, char **argv)
{
	unsigned long long spin_ns, probe_ns, t;
	unsigned long iters = 100000;
	int inner, calls;

	if (argc != 4)
		return 2;
	spin_ns = strtoull(argv[1], NULL, 10);
	inner = atoi(argv[2]);
	calls = atoi(argv[3]);
	if (inner < 1 || calls < 1)
		return 2;
	/* Iterations per chunk for ~spin_ns in all: from the best of a few timed runs. */
	t = median_of_calls(iters, 1, 9);
	iters = (unsigned long)((double)iters * (double)spin_ns / (double)inner / (double)(t ? t : 1));
	printf("unprobed_ns %llu\n", median_of_calls(iters, inner, calls));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	wait_line();
	probe_ns = median_of_calls(iters, inner, calls);
	fprintf(stderr, "comp_driver: probed_ns %llu\n", probe_ns);
	printf("done\n");
	fflush(stdout);
	wait_line();
	return 0;
}
