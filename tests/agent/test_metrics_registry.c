// SPDX-License-Identifier: GPL-2.0-only
/* The series registry: label sets, --max-series folding, rebase, exposition. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <string.h>
#include <cmocka.h>

#include "agent/metrics_registry.h"

static const char *const events[] = { "page-faults" };

static long series(struct metrics_registry *r, const char *fn, double calls)
{
	struct series_labels l = { .lib = "libz.so.1", .function = fn };
	struct series_values v = { .calls = calls };
	long id = metrics_registry__series(r, &l);

	assert_true(id >= 0);
	metrics_registry__set(r, id, &v);
	return id;
}

/* Settled, and past the first scrape that sees the new series (at zero): they show their totals. */
static void settle_served(struct metrics_registry *r)
{
	metrics_registry__settle(r);
	metrics_registry__served(r);
}

static char *render(struct metrics_registry *r, struct prom_buf *b)
{
	prom_buf_free(b);
	metrics_registry__render(r, b);
	assert_false(b->failed);
	return b->data;
}

static void test_same_labels_same_series(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct series_labels a = { .lib = "l", .function = "f" }, b = a, c = a;

	(void)state;
	c.sampled = true;
	assert_int_equal(metrics_registry__series(r, &a), metrics_registry__series(r, &b));
	assert_int_not_equal(metrics_registry__series(r, &a), metrics_registry__series(r, &c));
	b.pod = "p";
	assert_int_not_equal(metrics_registry__series(r, &a), metrics_registry__series(r, &b));
	metrics_registry__free(r);
}

static void test_caller_label_is_its_own_series(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct series_labels a = { .lib = "l", .function = "f", .caller = "app:main" }, b = a;
	struct prom_buf buf = {};
	long ia, ib;

	(void)state;
	b.caller = "other";
	ia = metrics_registry__series(r, &a);
	ib = metrics_registry__series(r, &b);
	assert_int_not_equal(ia, ib);
	assert_int_equal(metrics_registry__series(r, &(struct series_labels){ .lib = "l", .function = "f",
									 .caller = "app:main" }), ia);
	metrics_registry__set(r, ia, &(struct series_values){ .calls = 3 });
	metrics_registry__set(r, ib, &(struct series_values){ .calls = 4 });
	settle_served(r);
	assert_non_null(strstr(render(r, &buf), "dlprof_calls_total{lib=\"l\",function=\"f\",caller=\"app:main\"} 3\n"));
	assert_non_null(strstr(buf.data, "dlprof_calls_total{lib=\"l\",function=\"f\",caller=\"other\"} 4\n"));
	prom_buf_free(&buf);
	metrics_registry__free(r);
}

static void test_folding_keeps_the_most_active(void **state)
{
	struct metrics_registry *r = metrics_registry__new(3, events, 1);	/* 2 series + __other__ */
	struct prom_buf b = {};
	long busy;
	char *t;

	(void)state;
	busy = series(r, "busy", 1000);
	series(r, "quiet", 1);
	series(r, "middle", 10);
	settle_served(r);
	/* No room for "middle": it is more active than "quiet", which is folded. */
	assert_int_equal(metrics_registry__exposed(r), 2);
	assert_int_equal(metrics_registry__folded(r), 1);
	t = render(r, &b);
	assert_non_null(strstr(t, "dlprof_calls_total{lib=\"libz.so.1\",function=\"busy\"} 1000\n"));
	assert_non_null(strstr(t, "function=\"middle\"} 10\n"));
	assert_null(strstr(t, "function=\"quiet\""));
	assert_non_null(strstr(t, "dlprof_calls_total{lib=\"__other__\",function=\"__other__\"} 1\n"));

	/* Activity is what happened since the last settle: "middle" was idle, "burst" takes its place. */
	metrics_registry__set(r, busy, &(struct series_values){ .calls = 1100 });
	series(r, "burst", 500);
	settle_served(r);
	assert_int_equal(metrics_registry__exposed(r), 2);
	assert_int_equal(metrics_registry__folded(r), 2);
	t = render(r, &b);
	assert_non_null(strstr(t, "function=\"burst\"} 500\n"));
	assert_non_null(strstr(t, "function=\"busy\"} 1100\n"));
	assert_null(strstr(t, "function=\"middle\""));
	/* Folded series stay counted: __other__ only grows. */
	assert_non_null(strstr(t, "dlprof_calls_total{lib=\"__other__\",function=\"__other__\"} 11\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

static void test_rebase_continues_counters(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct prom_buf b = {};
	long id;

	(void)state;
	id = series(r, "f", 70);
	settle_served(r);
	metrics_registry__rebase(r);
	metrics_registry__set(r, id, &(struct series_values){ .calls = 5 });
	assert_non_null(strstr(render(r, &b), "function=\"f\"} 75\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

/* A removed container's series go, their slot is reused; a folded one's totals stay in __other__. */
static void test_retire_drops_and_keeps_other_growing(void **state)
{
	struct metrics_registry *r = metrics_registry__new(3, events, 1);	/* 2 series + __other__ */
	struct prom_buf b = {};
	long gone, folded, again;
	char *t;

	(void)state;
	gone = series(r, "gone", 1000);
	series(r, "kept", 500);
	folded = series(r, "folded", 7);
	settle_served(r);
	assert_int_equal(metrics_registry__folded(r), 1);
	metrics_registry__retire(r, gone);
	metrics_registry__retire(r, folded);
	metrics_registry__retire(r, folded);	/* twice: once counted */
	assert_int_equal(metrics_registry__retired(r), 2);
	assert_int_equal(metrics_registry__exposed(r), 1);
	t = render(r, &b);
	assert_null(strstr(t, "function=\"gone\""));
	assert_non_null(strstr(t, "dlprof_calls_total{lib=\"__other__\",function=\"__other__\"} 7\n"));
	again = series(r, "new", 3);
	assert_true(again == gone || again == folded);
	metrics_registry__set(r, gone == again ? folded : gone, &(struct series_values){ .calls = 99 });	/* ignored */
	settle_served(r);
	t = render(r, &b);
	assert_non_null(strstr(t, "function=\"new\"} 3\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

static void test_histogram_and_events_of_timed_series(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct series_labels l = { .lib = "l", .function = "f", .container = "c0ffee", .sampled = true };
	struct series_values v = { .calls = 4, .timed = true, .duration_sum_s = 0.5, .oncpu_s = 0.25 };
	struct prom_buf b = {};
	long id = metrics_registry__series(r, &l);
	char *t;

	(void)state;
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v.duration_le[k] = k == 0 ? 1 : 3;
	v.events[0] = 7;
	metrics_registry__set(r, id, &v);
	settle_served(r);
	t = render(r, &b);
	assert_non_null(strstr(t, "dlprof_call_duration_seconds_bucket{lib=\"l\",function=\"f\",container=\"c0ffee\",sampled=\"true\",le=\"1.023e-06\"} 1\n"));
	assert_non_null(strstr(t, "le=\"+Inf\"} 3\n"));
	assert_non_null(strstr(t, "dlprof_call_duration_seconds_count{lib=\"l\",function=\"f\",container=\"c0ffee\",sampled=\"true\"} 3\n"));
	assert_non_null(strstr(t, "dlprof_oncpu_seconds_total{lib=\"l\",function=\"f\",container=\"c0ffee\",sampled=\"true\"} 0.25\n"));
	assert_non_null(strstr(t, "dlprof_event_total{lib=\"l\",function=\"f\",container=\"c0ffee\",sampled=\"true\",event=\"page-faults\"} 7\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

/*
 * A new series is exposed at zero until a scrape has been served it, then
 * with its totals: Prometheus sees it start at 0, so increase() counts
 * calls made before its first scrape (a container that lived between two).
 */
static void test_new_series_start_at_zero_for_their_first_scrape(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct series_values v = { .calls = 42, .timed = true, .duration_sum_s = 0.5 };
	struct prom_buf b = {};
	long old, id;
	char *t;

	(void)state;
	old = series(r, "old", 10);
	settle_served(r);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v.duration_le[k] = 42;
	id = metrics_registry__series(r, &(struct series_labels){ .lib = "libz.so.1", .function = "new" });
	metrics_registry__set(r, id, &v);
	metrics_registry__set(r, old, &(struct series_values){ .calls = 11 });
	metrics_registry__settle(r);
	/* Refreshes between scrapes are no scrape: zero in each, histogram included; an old series counts. */
	for (int refresh = 0; refresh < 2; refresh++) {
		t = render(r, &b);
		assert_non_null(strstr(t, "dlprof_calls_total{lib=\"libz.so.1\",function=\"new\"} 0\n"));
		assert_non_null(strstr(t, "function=\"new\",le=\"+Inf\"} 0\n"));
		assert_non_null(strstr(t, "dlprof_call_duration_seconds_sum{lib=\"libz.so.1\",function=\"new\"} 0\n"));
		assert_non_null(strstr(t, "function=\"old\"} 11\n"));
	}
	/* This one answers a scrape: the next shows the totals, and so does every one after. */
	metrics_registry__served(r);
	metrics_registry__settle(r);
	t = render(r, &b);
	assert_non_null(strstr(t, "function=\"new\"} 42\n"));
	assert_non_null(strstr(t, "function=\"new\",le=\"+Inf\"} 42\n"));
	metrics_registry__served(r);
	assert_non_null(strstr(render(r, &b), "function=\"new\"} 42\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

/* A series made after a scrape's exposition was rendered waits for a scrape of its own. */
static void test_served_covers_only_series_exposed_before(void **state)
{
	struct metrics_registry *r = metrics_registry__new(10, events, 1);
	struct prom_buf b = {};

	(void)state;
	metrics_registry__served(r);
	series(r, "late", 5);
	assert_null(strstr(render(r, &b), "function=\"late\""));	/* not settled: not exposed yet */
	metrics_registry__settle(r);
	assert_non_null(strstr(render(r, &b), "function=\"late\"} 0\n"));
	metrics_registry__served(r);
	assert_non_null(strstr(render(r, &b), "function=\"late\"} 5\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

/* __other__ is a new series too, born with the first fold. */
static void test_other_starts_at_zero(void **state)
{
	struct metrics_registry *r = metrics_registry__new(2, events, 1);	/* 1 series + __other__ */
	struct prom_buf b = {};

	(void)state;
	series(r, "busy", 100);
	series(r, "quiet", 3);
	metrics_registry__settle(r);
	assert_non_null(strstr(render(r, &b), "{lib=\"__other__\",function=\"__other__\"} 0\n"));
	metrics_registry__served(r);
	assert_non_null(strstr(render(r, &b), "{lib=\"__other__\",function=\"__other__\"} 3\n"));
	prom_buf_free(&b);
	metrics_registry__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_labels_same_series),
		cmocka_unit_test(test_caller_label_is_its_own_series),
		cmocka_unit_test(test_folding_keeps_the_most_active),
		cmocka_unit_test(test_rebase_continues_counters),
		cmocka_unit_test(test_histogram_and_events_of_timed_series),
		cmocka_unit_test(test_retire_drops_and_keeps_other_growing),
		cmocka_unit_test(test_new_series_start_at_zero_for_their_first_scrape),
		cmocka_unit_test(test_served_covers_only_series_exposed_before),
		cmocka_unit_test(test_other_starts_at_zero),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
