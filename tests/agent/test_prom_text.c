// SPDX-License-Identifier: GPL-2.0-only
/* The Prometheus text format: escaping, numbers, samples. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "agent/prom_text.h"

static char *text(struct prom_buf *b)
{
	return b->data ? b->data : "";
}

static void test_label_value_escaping(void **state)
{
	struct prom_buf b = {};

	(void)state;
	prom_escape_value(&b, "a\\b\"c\nd");
	assert_string_equal(text(&b), "a\\\\b\\\"c\\nd");
	prom_buf_free(&b);
}

static void test_help_escapes_backslash_and_newline_not_quotes(void **state)
{
	struct prom_buf b = {};

	(void)state;
	prom_family(&b, "x_total", "counter", "say \"hi\"\\ now\nthen");
	assert_string_equal(text(&b), "# HELP x_total say \"hi\"\\\\ now\\nthen\n# TYPE x_total counter\n");
	prom_buf_free(&b);
}

static void test_sample_with_labels_extra_and_absent(void **state)
{
	struct prom_label l[] = { { "lib", "libz.so.1" }, { "pod", NULL }, { "function", "std::vector<int>::at" } };
	struct prom_buf b = {};

	(void)state;
	prom_sample(&b, "m_bucket", l, 3, "le", "+Inf", 12345678901234.0);
	assert_string_equal(text(&b), "m_bucket{lib=\"libz.so.1\",function=\"std::vector<int>::at\",le=\"+Inf\"} 12345678901234\n");
	prom_buf_free(&b);
}

static void test_sample_without_labels(void **state)
{
	struct prom_buf b = {};

	(void)state;
	prom_sample(&b, "up", NULL, 0, NULL, NULL, 1);
	assert_string_equal(text(&b), "up 1\n");
	prom_buf_free(&b);
}

static void test_values(void **state)
{
	struct prom_buf b = {};

	(void)state;
	prom_value(&b, 0.1);
	prom_printf(&b, " ");
	prom_value(&b, 2.3404e-05);
	prom_printf(&b, " ");
	prom_value(&b, INFINITY);
	prom_printf(&b, " ");
	prom_value(&b, NAN);
	prom_printf(&b, " ");
	prom_value(&b, 9007199254740991.0);	/* 2^53 - 1: a count, whole */
	assert_string_equal(text(&b), "0.1 2.3404e-05 +Inf NaN 9007199254740991");
	prom_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_label_value_escaping),
		cmocka_unit_test(test_help_escapes_backslash_and_newline_not_quotes),
		cmocka_unit_test(test_sample_with_labels_extra_and_absent),
		cmocka_unit_test(test_sample_without_labels),
		cmocka_unit_test(test_values),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
