// SPDX-License-Identifier: GPL-2.0-only
/* util/u64_map: every key found after growth, absent keys not, values replaced. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <errno.h>
#include <cmocka.h>

#include "util/u64_map.h"

static void test_put_get(void **state)
{
	struct u64_map m = { 0 };
	size_t v;

	(void)state;
	assert_int_equal(u64_map_get(&m, 1, &v), -ENOENT);
	/* Keys that differ in their high bits only, as pid << 32 | tid do. */
	for (uint64_t i = 0; i < 5000; i++)
		assert_int_equal(u64_map_put(&m, i << 32 | 7, (size_t)i), 0);
	assert_int_equal(m.cnt, 5000);
	for (uint64_t i = 0; i < 5000; i++) {
		assert_int_equal(u64_map_get(&m, i << 32 | 7, &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(u64_map_get(&m, 5000ull << 32 | 7, &v), -ENOENT);
	assert_int_equal(u64_map_put(&m, 7, 42), 0);
	assert_int_equal(m.cnt, 5000);
	assert_int_equal(u64_map_get(&m, 7, &v), 0);
	assert_int_equal(v, 42);
	u64_map_free(&m);
	u64_map_free(&m);
	u64_map_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
