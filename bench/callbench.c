// SPDX-License-Identifier: GPL-2.0-only
/*
 * callbench FUNC N: calls FUNC of libbenchfn N times, prints "ns_per_call X".
 * The same binary runs with and without probes so the difference is the
 * probes' cost alone.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int bench_push_rbp(int x);
int bench_test_je(int x);
int bench_lea_ret(int x);

static const struct {
	const char *name;
	int (*fn)(int);
} funcs[] = {
	{ "bench_push_rbp", bench_push_rbp },
	{ "bench_test_je", bench_test_je },
	{ "bench_lea_ret", bench_lea_ret },
};

int main(int argc, char **argv)
{
	volatile int sink = 0;
	struct timespec a, b;
	long n;

	if (argc != 3)
		return 2;
	n = atol(argv[2]);
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		if (strcmp(argv[1], funcs[i].name))
			continue;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (long k = 0; k < n; k++)
			sink += funcs[i].fn((int)k + 1);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("ns_per_call %.1f\n",
		       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
		return 0;
	}
	fprintf(stderr, "callbench: unknown function %s\n", argv[1]);
	return 2;
}
