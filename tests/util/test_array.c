// SPDX-License-Identifier: GPL-2.0-only
/* util/array and util/str_list: growth, zeroed slots, nothing lost on the way. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "util/array.h"
#include "util/str_list.h"

static void test_reserve_keeps_elements(void **state)
{
	size_t cap = 0;
	int *a = NULL;

	(void)state;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(ARRAY_RESERVE(a, cap, (size_t)i + 1), 0);
		assert_true(cap >= (size_t)i + 1);
		a[i] = i;
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(a[i], i);
	/* Doubling: far fewer capacities than appends. */
	assert_true(cap < 2048);
	free(a);
}

static void test_reserve_refuses_overflow(void **state)
{
	size_t cap = 0;
	uint64_t *a = NULL;

	(void)state;
	assert_int_equal(ARRAY_RESERVE(a, cap, SIZE_MAX / 4), -ENOMEM);
	assert_null(a);
	assert_int_equal(cap, 0);
}

static void test_slot_is_zeroed(void **state)
{
	struct { int x; char *p; } *a = NULL;
	size_t n = 0;

	(void)state;
	for (; n < 50; n++) {
		__typeof__(&*a) s = ARRAY_SLOT(a, n);

		assert_non_null(s);
		assert_int_equal(s->x, 0);
		assert_null(s->p);
		s->x = (int)n;
	}
	for (size_t i = 0; i < n; i++)
		assert_int_equal(a[i].x, (int)i);
	free(a);
}

static void test_str_list(void **state)
{
	struct str_list l = { 0 };

	(void)state;
	assert_int_equal(str_list_push(&l, "abc,def", 3), 0);
	assert_int_equal(str_list_push(&l, "def", 3), 0);
	assert_int_equal(l.cnt, 2);
	assert_string_equal(l.items[0], "abc");
	assert_string_equal(l.items[1], "def");
	str_list_free(&l);
	assert_int_equal(l.cnt, 0);
	assert_null(l.items);
	str_list_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reserve_keeps_elements),
		cmocka_unit_test(test_reserve_refuses_overflow),
		cmocka_unit_test(test_slot_is_zeroed),
		cmocka_unit_test(test_str_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
