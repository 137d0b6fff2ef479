// SPDX-License-Identifier: GPL-2.0-only
/* The attach's pure parts: the order classic probes close in, and the file limit. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <sys/resource.h>
#include <cmocka.h>

#include "dlprof.h"
#include "probe/attach.h"

#define ENTRY(f, id) { .fd = (f), .ret = false, .cookie = (id) }
#define RET(f, id) { .fd = (f), .ret = true, .cookie = (id) }

static void assert_fds(const struct attach_link *l, size_t n, const int *want)
{
	for (size_t i = 0; i < n; i++)
		assert_int_equal(l[i].fd, want[i]);
}

/* Most called first, a function's entry before its return, ties in the order made. */
static void test_order_hot_first(void **state)
{
	struct attach_link l[] = {
		ENTRY(10, 0), RET(11, 0), ENTRY(12, 1), RET(13, 1), ENTRY(14, 2), RET(15, 2), ENTRY(16, 3),
	};
	const uint64_t calls[] = { 0, 500, 0, 7 };
	const int want[] = { 12, 13, 16, 10, 11, 14, 15 };

	(void)state;
	attach_links_order(l, 7, calls, 4);
	assert_fds(l, 7, want);
}

/* The unwinder's probes close last, whatever their id's calls; flags in the cookie do not change the id. */
static void test_order_unwind_last(void **state)
{
	struct attach_link l[] = {
		ENTRY(20, 1 | DLPROF_COOKIE_UNWIND_THROW), ENTRY(21, 0), RET(22, 0),
		ENTRY(23, 1 | DLPROF_COOKIE_STEPPED), RET(24, 1 | DLPROF_COOKIE_STEPPED),
	};
	const uint64_t calls[] = { 3, 9 };
	const int want[] = { 23, 24, 21, 22, 20 };

	(void)state;
	attach_links_order(l, 5, calls, 2);
	assert_fds(l, 5, want);
}

/* No calls, or ids past them: the order they were made in. */
static void test_order_kept(void **state)
{
	struct attach_link l[] = { ENTRY(30, 5), RET(31, 5), ENTRY(32, 0), ENTRY(33, 9) };
	const uint64_t calls[] = { 1 };
	const int made[] = { 30, 31, 32, 33 }, hot[] = { 32, 30, 31, 33 };

	(void)state;
	attach_links_order(l, 4, NULL, 0);
	assert_fds(l, 4, made);
	attach_links_order(l, 4, calls, 1);
	assert_fds(l, 4, hot);
}

/* The soft limit rises to the hard one when the probes need more than it gives. */
static void test_fd_reserve(void **state)
{
	struct rlimit before, low, after;

	(void)state;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &before), 0);
	if (before.rlim_max < 4096)
		skip();
	low = (struct rlimit){ 256, before.rlim_max };
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(attach_fd_reserve(2000), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &after), 0);
	assert_true(after.rlim_cur == before.rlim_max);
	/* Already room: nothing changes. */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &(struct rlimit){ 4000, before.rlim_max }), 0);
	assert_int_equal(attach_fd_reserve(100), 0);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &after), 0);
	assert_int_equal(after.rlim_cur, 4000);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &before), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_hot_first),
		cmocka_unit_test(test_order_unwind_last),
		cmocka_unit_test(test_order_kept),
		cmocka_unit_test(test_fd_reserve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
