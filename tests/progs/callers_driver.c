// SPDX-License-Identifier: GPL-2.0-only
/*
 * Known call sites for --by caller (tests/integration/caller_test.py):
 * dlt_add() called from a static function, from an exported one, twice from
 * one function (two sites, one caller), and from another library;
 * dlt_test_je(), whose probe stands past its entry, from its own caller.
 * Usage: callers_driver N; prints "callers: NAME CALLS" per caller.
 * callers_driver --wait N: prints "ready PID", then makes the calls once
 * per "go" line read (answering "done"), until "bye" or the end of input:
 * a process to find with -p, a cgroup or a container before it calls.
 * The callers are not inlined and their calls are not tail calls (the sum
 * is used after them), so each call returns into the function named.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "callers.h"
#include "dltest.h"

static volatile int sink;

static __attribute__((noinline)) int static_caller(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dlt_add(i, 1);
	return sum + 1;
}

__attribute__((noinline)) int exported_caller(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dlt_add(i, 3);
	return sum + 1;
}

/* Two call sites in one function: one caller row. */
static __attribute__((noinline)) int two_sites_caller(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++) {
		sum += dlt_add(i, 4);
		sum ^= dlt_add(sum, 5);
	}
	return sum + 1;
}

static __attribute__((noinline)) int je_caller(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dlt_test_je(i & 1);
	return sum + 1;
}

static void call_all(int n)
{
	sink = static_caller(n);
	sink = exported_caller(2 * n);
	sink = two_sites_caller(3 * n);
	sink = callers_relay(5 * n);
	sink = je_caller(7 * n);
}

/* Rounds on demand, for a profiler attached to this process (or its cgroup) first. */
static int wait_and_call(int n)
{
	char line[64];

	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "bye", 3)) {
		if (strncmp(line, "go", 2))
			continue;
		call_all(n);
		printf("done\n");
		fflush(stdout);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n;

	if (argc > 2 && !strcmp(argv[1], "--wait"))
		return wait_and_call(atoi(argv[2]));
	n = argc > 1 ? atoi(argv[1]) : 100;
	call_all(n);
	printf("callers: static_caller %d\n", n);
	printf("callers: exported_caller %d\n", 2 * n);
	printf("callers: two_sites_caller %d\n", 2 * 3 * n);
	printf("callers: callers_relay %d\n", 5 * n);
	printf("callers: je_caller %d\n", 7 * n);
	return 0;
}
