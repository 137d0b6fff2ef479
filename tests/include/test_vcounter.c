// SPDX-License-Identifier: GPL-2.0-only
/* The per-thread virtual counter arithmetic the BPF programs use. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "vcounter.h"

/* A thread runs 100 units, is switched out while others add 900, runs 50 more. */
static void test_excludes_other_threads(void **state)
{
	struct vcounter c;
	uint64_t snap;

	(void)state;
	vcounter_start(&c, 1000);
	snap = vcounter_value(&c, 1000);
	vcounter_switch_out(&c, 1100);
	vcounter_switch_in(&c, 2000);
	assert_int_equal(vcounter_value(&c, 2050) - snap, 150);
}

/* Another CPU's counter has an unrelated value: only progress on each CPU counts. */
static void test_migration(void **state)
{
	struct vcounter c;

	(void)state;
	vcounter_start(&c, 5000);		/* CPU 0 reads 5000 */
	vcounter_switch_out(&c, 5200);		/* +200 on CPU 0 */
	vcounter_switch_in(&c, 17);		/* CPU 1 reads 17 */
	assert_int_equal(vcounter_value(&c, 117), 300);
}

static void test_wrap(void **state)
{
	struct vcounter c;
	uint64_t snap;

	(void)state;
	vcounter_start(&c, UINT64_MAX - 10);
	snap = vcounter_value(&c, UINT64_MAX - 5);
	vcounter_switch_out(&c, 4);		/* wrapped: 15 units since the start */
	vcounter_switch_in(&c, UINT64_MAX - 1);
	assert_int_equal(vcounter_value(&c, 2) - snap, 15 - 5 + 4);
}

/*
 * A thread first seen in the middle of a call: its state starts when the
 * probe activates it, so progress before that is not counted, and a
 * switch-in before any switch-out just moves the base.
 */
static void test_first_seen_mid_call(void **state)
{
	struct vcounter c;
	uint64_t snap;

	(void)state;
	vcounter_start(&c, 40);
	vcounter_switch_in(&c, 90);		/* a switch-in whose switch-out was never seen */
	snap = vcounter_value(&c, 100);
	assert_int_equal(snap, 10);
	vcounter_switch_out(&c, 130);
	vcounter_switch_in(&c, 1000);
	assert_int_equal(vcounter_value(&c, 1001) - snap, 31);
}

static void test_many_switches(void **state)
{
	struct vcounter c;
	uint64_t cpu = 0, own = 0;

	(void)state;
	vcounter_start(&c, cpu);
	for (int i = 0; i < 1000; i++) {
		cpu += 7;		/* ours */
		own += 7;
		vcounter_switch_out(&c, cpu);
		cpu += 1000003;		/* someone else's */
		vcounter_switch_in(&c, cpu);
	}
	assert_int_equal(vcounter_value(&c, cpu + 1), own + 1);
}

static void test_scale(void **state)
{
	(void)state;
	assert_int_equal(vcounter_scale(100, 10, 10), 100);		/* not multiplexed */
	assert_int_equal(vcounter_scale(100, 10, 0), 100);		/* never ran: nothing to extrapolate */
	assert_int_equal(vcounter_scale(100, 20, 10), 200);
	assert_int_equal(vcounter_scale(3, 1000, 999), 3);
	/* Large counts do not overflow. */
	assert_true(vcounter_scale(1ull << 50, 3ull << 40, 1ull << 40) >= (3ull << 50) - (1ull << 41));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_excludes_other_threads),
		cmocka_unit_test(test_migration),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_first_seen_mid_call),
		cmocka_unit_test(test_many_switches),
		cmocka_unit_test(test_scale),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
