// SPDX-License-Identifier: GPL-2.0-only
/* The idle copies' policy through made-up timelines: what is kept, what is evicted, what a sweep detaches. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "probe/idle_copies.h"

#define MAX_COPIES 128

/* A set of copies as lib_copies.c keeps them, reduced to what the policy reads. */
struct world {
	size_t max_idle;
	size_t nr;
	size_t evictions;
	struct {
		bool idle;
		bool detached;
		bool file_remains;
		double idle_since_s;
	} c[MAX_COPIES];
};

static double ms(double t)
{
	return t / 1e3;
}

static void world_init(struct world *w, size_t max_idle, size_t nr)
{
	*w = (struct world){ .max_idle = max_idle, .nr = nr };
	for (size_t i = 0; i < nr; i++)
		w->c[i].file_remains = true;
}

static struct idle_copies count(const struct world *w)
{
	struct idle_copies s = {};

	for (size_t i = 0; i < w->nr; i++)
		idle_copies__count(&s, i, w->c[i].idle, w->c[i].idle_since_s);
	return s;
}

static void detach(struct world *w, size_t i)
{
	w->c[i].idle = false;
	w->c[i].detached = true;
}

/* Copy k's last holder exits at now_ms: the driver's part of lib_copies__exited. */
static enum idle_decision release(struct world *w, size_t k, double now_ms)
{
	struct idle_copies s = count(w);
	size_t evict = MAX_COPIES;
	enum idle_decision d = idle_copies__release(&s, w->max_idle, w->c[k].file_remains, &evict);

	if (d == IDLE_DETACH) {
		detach(w, k);
		return d;
	}
	if (d == IDLE_KEEP_EVICT) {
		assert_true(evict < w->nr && w->c[evict].idle && evict != k);
		detach(w, evict);
		w->evictions++;
	}
	w->c[k].idle = true;
	w->c[k].idle_since_s = ms(now_ms);
	return d;
}

/* An image's file k found at now_ms: lib_copies__add_image_file's answer. */
static int add_image(struct world *w, size_t k, double now_ms)
{
	struct idle_copies s = count(w);

	if (!idle_copies__room(&s, w->max_idle))
		return -ENOSPC;
	w->c[k].idle = true;
	w->c[k].idle_since_s = ms(now_ms);
	return 1;
}

static void sweep(struct world *w)
{
	for (size_t i = 0; i < w->nr; i++)
		if (w->c[i].idle && idle_copies__sweep(w->c[i].file_remains) == IDLE_DETACH)
			detach(w, i);
}

static void test_kept_under_the_limit(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 3, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(release(&w, i, 10.0 * i), IDLE_KEEP);
	for (size_t i = 0; i < 3; i++)
		assert_true(w.c[i].idle && !w.c[i].detached);
	assert_int_equal(count(&w).nr_idle, 3);
	assert_int_equal(w.evictions, 0);
}

static void test_the_limit_evicts_the_oldest(void **state)
{
	struct world w;
	struct idle_copies s = {};
	size_t evict = MAX_COPIES;

	(void)state;
	world_init(&w, 2, 3);
	/* Released out of index order: the oldest is the highest index. */
	assert_int_equal(release(&w, 2, 1), IDLE_KEEP);
	assert_int_equal(release(&w, 0, 2), IDLE_KEEP);
	assert_int_equal(release(&w, 1, 3), IDLE_KEEP_EVICT);
	assert_true(w.c[2].detached && !w.c[2].idle);
	assert_true(w.c[0].idle && w.c[1].idle);
	assert_int_equal(count(&w).nr_idle, 2);

	/* Idle since the same time: the lowest index is the oldest, counted in either order. */
	idle_copies__count(&s, 7, true, ms(5));
	idle_copies__count(&s, 4, true, ms(5));
	idle_copies__count(&s, 9, true, ms(6));
	assert_int_equal(idle_copies__release(&s, 3, true, &evict), IDLE_KEEP_EVICT);
	assert_int_equal(evict, 4);
}

static void test_a_gone_file_is_detached_under_the_limit(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 8, 3);
	assert_int_equal(release(&w, 0, 1), IDLE_KEEP);
	assert_int_equal(release(&w, 1, 2), IDLE_KEEP);
	/* The layer goes away at 3 ms: the next sweep detaches its copy, the other stays. */
	w.c[0].file_remains = false;
	sweep(&w);
	assert_true(w.c[0].detached && !w.c[0].idle);
	assert_true(w.c[1].idle);
	/* Gone before its last holder exits: never kept. */
	w.c[2].file_remains = false;
	assert_int_equal(release(&w, 2, 4), IDLE_DETACH);
	assert_true(w.c[2].detached);
	assert_int_equal(count(&w).nr_idle, 1);
}

static void test_limit_zero_keeps_none(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 0, 2);
	assert_int_equal(release(&w, 0, 1), IDLE_DETACH);
	assert_int_equal(release(&w, 1, 2), IDLE_DETACH);
	assert_int_equal(add_image(&w, 1, 3), -ENOSPC);
	assert_int_equal(count(&w).nr_idle, 0);
	assert_int_equal(w.evictions, 0);
}

/* 100 containers of one image, each its own copy, exiting one after another. */
static void test_restart_storm_keeps_the_newest(void **state)
{
	const size_t n = 100, max_idle = 8;
	struct world w;

	(void)state;
	world_init(&w, max_idle, n);
	for (size_t k = 0; k < n; k++) {
		release(&w, k, 5.0 * k);
		assert_true(count(&w).nr_idle <= max_idle);
		for (size_t i = 0; i <= k; i++)
			assert_int_equal(w.c[i].idle, i + max_idle > k);
	}
	assert_int_equal(w.evictions, n - max_idle);
}

static void test_image_copy_refused_when_full(void **state)
{
	struct world w;

	(void)state;
	world_init(&w, 2, 4);
	assert_int_equal(add_image(&w, 0, 1), 1);
	assert_int_equal(release(&w, 1, 2), IDLE_KEEP);
	/* Full: refused, and no copy that ran makes room for it. */
	assert_int_equal(add_image(&w, 2, 3), -ENOSPC);
	assert_true(w.c[0].idle && w.c[1].idle && !w.c[2].idle);
	/* A copy that exits still gets in, the oldest (the image's) making room. */
	assert_int_equal(release(&w, 3, 4), IDLE_KEEP_EVICT);
	assert_true(w.c[0].detached && w.c[1].idle && w.c[3].idle);
	/* Room again once a file is gone. */
	w.c[1].file_remains = false;
	sweep(&w);
	assert_int_equal(add_image(&w, 2, 5), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_under_the_limit),
		cmocka_unit_test(test_the_limit_evicts_the_oldest),
		cmocka_unit_test(test_a_gone_file_is_detached_under_the_limit),
		cmocka_unit_test(test_limit_zero_keeps_none),
		cmocka_unit_test(test_restart_storm_keeps_the_newest),
		cmocka_unit_test(test_image_copy_refused_when_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
