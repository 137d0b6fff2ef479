// SPDX-License-Identifier: GPL-2.0-only
/* Telling a process that exited from a later one that holds its pid. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/pid_lives.h"

static void test_alive_then_exited(void **state)
{
	struct pid_lives *pl = pid_lives__new();
	int err;

	(void)state;
	assert_non_null(pl);
	/* First sight of a live process: remembered, not ended. */
	assert_false(pid_lives__ended(pl, 100, 5000, &err));
	assert_int_equal(err, 0);
	assert_false(pid_lives__ended(pl, 100, 5000, &err));
	assert_int_equal(pid_lives__count(pl), 1);
	/* Gone: ended once, then a pid no process holds. */
	assert_true(pid_lives__ended(pl, 100, 0, &err));
	assert_int_equal(pid_lives__count(pl), 0);
	assert_true(pid_lives__ended(pl, 100, 0, &err));
	pid_lives__free(pl);
}

static void test_pid_reused(void **state)
{
	struct pid_lives *pl = pid_lives__new();
	int err;

	(void)state;
	assert_false(pid_lives__ended(pl, 300, 70, &err));
	assert_false(pid_lives__ended(pl, 200, 60, &err));
	assert_false(pid_lives__ended(pl, 400, 80, &err));
	/* Another process holds 300 now: the one seen has ended... */
	assert_true(pid_lives__ended(pl, 300, 90, &err));
	/* ...and the new one is a life of its own from its next sight. */
	assert_false(pid_lives__ended(pl, 300, 90, &err));
	assert_false(pid_lives__ended(pl, 300, 90, &err));
	assert_true(pid_lives__ended(pl, 300, 0, &err));
	/* The others kept their own start times. */
	assert_false(pid_lives__ended(pl, 200, 60, &err));
	assert_false(pid_lives__ended(pl, 400, 80, &err));
	assert_true(pid_lives__ended(pl, 200, 61, &err));
	assert_int_equal(pid_lives__count(pl), 1);
	pid_lives__free(pl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alive_then_exited),
		cmocka_unit_test(test_pid_reused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
