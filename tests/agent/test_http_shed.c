// SPDX-License-Identifier: GPL-2.0-only
/*
 * The endpoint's shedding policy: which connections close, from their
 * ages and whether their request was read whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "agent/http_shed.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const struct http_shed_limits lim = { .deadline_ms = 5000, .keep = 2, .min_age_ms = 1000 };

/* Which of conns the policy closes, as a string of '1' and '0' (its count checked against it). */
static const char *picked(const struct http_shed_limits *l, const struct http_conn_age *conns, size_t n)
{
	static char out[16];
	bool shed[16];
	size_t count, ones = 0;

	assert_true(n < sizeof(out));
	memset(shed, 0xa5, sizeof(shed));	/* every entry must be written */
	count = http_shed__pick(l, conns, n, shed);
	for (size_t i = 0; i < n; i++) {
		out[i] = shed[i] ? '1' : '0';
		ones += shed[i];
	}
	out[n] = '\0';
	assert_int_equal(count, ones);
	return out;
}

static void test_nothing_under_keep_and_deadline(void **state)
{
	const struct http_conn_age c[] = { { 4999, false }, { 0, false } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "00");
	assert_string_equal(picked(&lim, c, 0), "");
}

/* Past the deadline a connection closes whatever the pressure, an answer still being sent too. */
static void test_deadline_closes_any(void **state)
{
	const struct http_conn_age c[] = { { 5000, false }, { 10, false }, { 9000, true } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "101");
}

/* Past keep, the oldest requests still being read go first. */
static void test_pressure_sheds_oldest_incomplete(void **state)
{
	const struct http_conn_age c[] = { { 3000, false }, { 1100, false }, { 4000, false }, { 2000, false } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "1010");
}

/* A request read whole is being answered: the pressure leaves it, and takes the next oldest. */
static void test_pressure_spares_answering(void **state)
{
	const struct http_conn_age c[] = { { 4000, true }, { 3000, false }, { 2000, false } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "010");
}

/* Connections younger than min_age are left: a flood of new ones does not churn through each other. */
static void test_pressure_spares_young(void **state)
{
	const struct http_conn_age c[] = { { 999, false }, { 500, false }, { 1000, false }, { 0, false } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "0010");
}

/* What the deadline closes relieves the pressure first. */
static void test_deadline_counts_toward_keep(void **state)
{
	const struct http_conn_age c[] = { { 6000, false }, { 1500, false }, { 1200, false }, { 10, false } };

	(void)state;
	assert_string_equal(picked(&lim, c, N(c)), "1100");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_under_keep_and_deadline),
		cmocka_unit_test(test_deadline_closes_any),
		cmocka_unit_test(test_pressure_sheds_oldest_incomplete),
		cmocka_unit_test(test_pressure_spares_answering),
		cmocka_unit_test(test_pressure_spares_young),
		cmocka_unit_test(test_deadline_counts_toward_keep),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
