// SPDX-License-Identifier: GPL-2.0-only
/*
 * Built twice, position-dependent, with REUSE_CALLER naming the one caller
 * (caller_one, caller_two): the two programs have the same code at the
 * same addresses, so a process of the second that takes a pid the first
 * held returns from dlt_add() to the very address the first did
 * (tests/integration/caller_test.py). Usage: callers_reuse_* N.
 */
#include <stdio.h>
#include <stdlib.h>

#include "dltest.h"

static volatile int sink;

static __attribute__((noinline)) int REUSE_CALLER(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dlt_add(i, 1);
	return sum + 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	sink = REUSE_CALLER(n);
	return 0;
}
