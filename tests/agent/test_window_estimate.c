// SPDX-License-Identifier: GPL-2.0-only
/*
 * A sampling window's estimate (agent/window_estimate.h, with the callers'
 * pace from agent/caller_pace.h) over made-up timelines: 30 s of windows
 * at the agent's default spacing (25 ms every 0.52 s after a 1 ms attach,
 * 2 ms to close) over callers of a known kind, each window's count and the
 * callers' CPU clocks made from the timeline, the sampled series built as
 * the agent builds it (each window's rate times k over the time since the
 * last one), and set against the callers' own count.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>

#include "agent/caller_pace.h"
#include "agent/window_estimate.h"

#define EPS 1e-9
/* What a probe pair costs the caller, and what the agent takes it to cost. */
#define PAIR_S 5e-6
/*
 * A process's CPU clock, read from another, moves in steps this long (the
 * scheduler's tick) while its threads run flat out; one that sleeps between
 * calls has it brought up to date at each sleep.
 */
#define CPU_TICK_S 0.004

/* One process's callers on one CPU each; how they call. */
struct caller {
	double work_s;			/* its own work per call */
	double paced;			/* calls a second set elsewhere; 0: flat out */
	double (*share)(double t);	/* the CPU share it gets when it runs flat out */
	/* a burst instead: calls a second from burst_a to burst_b, none else */
	double burst, burst_a, burst_b;
	bool on_time;			/* the windows open on time, 0.52 s apart */
};

static double alone(double t)
{
	(void)t;
	return 1;
}

/* The machine's load doubles at 15 s: a flat-out caller gets half its CPU. */
static double load_doubles(double t)
{
	return t < 15 ? 1 : 0.5;
}

/* Calls a second, probed or not. */
static double rate(const struct caller *c, double t, bool probed)
{
	if (c->burst > 0)
		return t >= c->burst_a && t < c->burst_b ? c->burst : 0;
	if (c->paced > 0)
		return c->paced;
	return c->share(t) / (c->work_s + (probed ? PAIR_S : 0));
}

/* Calls from a to b (a midpoint rule over 1 ms steps: the rates are steps). */
static double calls_between(const struct caller *c, double a, double b, bool probed)
{
	double n = 0;

	for (double t = a; t < b - EPS; t += 0.001) {
		double dt = fmin(0.001, b - t);

		n += rate(c, t + dt / 2, probed) * dt;
	}
	return n;
}

/* The CPU time its calls took from a to b. */
static double cpu_between(const struct caller *c, double a, double b, bool probed)
{
	return calls_between(c, a, b, probed) * (c->work_s + (probed ? PAIR_S : 0));
}

struct run {
	double own;			/* the callers' own count up to the last window's end */
	double est;			/* the sampled series there, with the callers' pace */
	double est_flat;		/* ... with the flat-out model alone */
	double last_k;
	double t1;			/* the last window's end */
};

/* A process: its callers, each a thread on its own CPU. */
struct process {
	const struct caller *thr;
	size_t nr;
};

/* Its calls from a to b. */
static double proc_calls(const struct process *p, double a, double b, bool probed)
{
	double n = 0;

	for (size_t i = 0; i < p->nr; i++)
		n += calls_between(&p->thr[i], a, b, probed);
	return n;
}

/*
 * Its CPU time run on to `to` (probed or not since the last call), and its
 * clock as read then: in steps while a thread of it runs flat out.
 */
static double cpu_to(const struct process *p, double *cpu, double *t, double to, bool probed)
{
	bool steps = false;

	for (size_t i = 0; i < p->nr; i++) {
		*cpu += cpu_between(&p->thr[i], *t, to, probed);
		steps |= !p->thr[i].paced && !p->thr[i].burst;
	}
	*t = to;
	return steps ? floor(*cpu / CPU_TICK_S) * CPU_TICK_S : *cpu;
}

/*
 * The agent wakes late by up to a few ms (a tick, another task first): each
 * window opens that much after its time. Fixed steps would keep every
 * window at one phase of the clocks' steps, and their error would add up
 * instead of averaging out.
 */
static double wake_late(const struct process *p, unsigned *seed)
{
	if (p->thr[0].on_time)
		return 0;
	*seed = *seed * 1103515245u + 12345u;
	return (double)((*seed >> 16) % 4000) * 1e-6;
}

static struct run run_process(const struct process *p, double seconds)
{
	struct run r = {};
	struct pace_sums sums = {};
	double covered = 0, cpu = 0, cpu_t = 0, own_t = 0, closed_t = -1, closed_cpu = 0;
	unsigned seed = 1;

	for (double open_t = 0.5; open_t + 0.03 < seconds; open_t += 0.52 + wake_late(p, &seed)) {
		double t0 = open_t + 0.001, t1 = t0 + 0.025, n = proc_calls(p, t0, t1, true), per_cpu[2] = {};
		double open_cpu = cpu_to(p, &cpu, &cpu_t, open_t, false);
		double t0_cpu = cpu_to(p, &cpu, &cpu_t, t0, false);
		double t1_cpu = cpu_to(p, &cpu, &cpu_t, t1, true);
		struct window_counts wc = {
			.open_t = open_t, .attach_s = 0.001, .free_t = t1, .attach_calls = 0, .free_calls = n,
			.free_seen = n, .all = n, .pair_ns = PAIR_S * 1e9, .cpu_calls = per_cpu, .nr_cpus = p->nr,
		};
		struct window_estimate e;
		double k, k_flat;

		for (size_t i = 0; i < p->nr; i++)
			per_cpu[i] = calls_between(&p->thr[i], t0, t1, true);
		e = window_estimate(&wc);
		/* The callers' readings go into their sums before the rows are scaled (close_window_finish). */
		if (closed_t >= 0 && n > 0) {
			struct pace_obs o = {
				.gap_s = open_t - closed_t,
				.gap_cpu_s = open_cpu - closed_cpu,
				.win_s = t1 - t0,
				.win_cpu_s = t1_cpu - t0_cpu,
				.probe_cpu_s = n * PAIR_S,
			};

			pace_add(&sums, &o);
		}
		closed_t = t1 + 0.002;
		closed_cpu = cpu_to(p, &cpu, &cpu_t, closed_t, false);
		k = window_estimate_k(&e, pace_factor(&sums));
		k_flat = window_estimate_k(&e, 0);
		r.est += n * k * (t1 - covered) / (t1 - e.t0);
		r.est_flat += n * k_flat * (t1 - covered) / (t1 - e.t0);
		r.last_k = k;
		covered = r.t1 = t1;
		r.own += proc_calls(p, own_t, t0, false) + n;
		own_t = t1;
	}
	return r;
}

/* A process of one caller. */
static struct run run_windows(const struct caller *c, double seconds)
{
	const struct process p = { c, 1 };

	return run_process(&p, seconds);
}

static double rel(double est, double own)
{
	return est / own - 1;
}

/*
 * A server's pace, 1,000 to 50,000 calls a second, 10 us of work each,
 * idle in between: the probes take up to a quarter of its time in a
 * window but no call from it. The flat-out model reads them as lost calls
 * (+11% at 20,000, +33% at 50,000); its CPU clocks say it is paced, and
 * the estimate comes within 5% of its own count (the first windows, before
 * the clocks are summed enough, are the flat model's).
 */
static void test_paced_caller(void **state)
{
	const double rates[] = { 1000, 5000, 20000, 50000 };

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		const struct caller c = { .work_s = 10e-6, .paced = rates[i], .share = alone };
		struct run r = run_windows(&c, 30);

		assert_true(fabs(r.own - rates[i] * r.t1) < 1e-6 * r.own);
		assert_true(fabs(rel(r.est, r.own)) < 0.05);
		assert_true(fabs(r.last_k - 1) < 0.01);
	}
	{
		const struct caller c = { .work_s = 10e-6, .paced = 20000, .share = alone };

		struct run r = run_windows(&c, 30);

		assert_true(rel(r.est_flat, r.own) > 0.08);
	}
}

/*
 * A caller that runs flat out, 1,000 to 50,000 calls a second unprobed
 * (40,000 in a window at the most): both models give (work + pair) / work,
 * and the estimate comes within 5% of its own count (which the windows
 * lower by their share of its time), its CPU clock's steps and all.
 */
static void test_cpu_bound_caller(void **state)
{
	const double work_s[] = { 1e-3, 200e-6, 50e-6, 20e-6 };

	(void)state;
	for (size_t i = 0; i < sizeof(work_s) / sizeof(work_s[0]); i++) {
		const struct caller c = { .work_s = work_s[i], .share = alone };
		struct run r = run_windows(&c, 30);

		assert_true(fabs(rel(r.est, r.own)) < 0.05);
		assert_true(fabs(rel(r.est_flat, r.own)) < 0.05);
		assert_true(fabs(r.last_k - (work_s[i] + PAIR_S) / work_s[i]) < 0.05);
	}
}

/*
 * The machine's load doubles at 15 s: the flat-out caller gets half its
 * CPU. The flat model takes it to have run the whole window and reads half
 * of its probes' cost (k 1.11: its second half -11%, the 30 s -3.7%); the
 * CPU clocks see it run half the time in and out of the windows, and k
 * stays 1.25.
 */
static void test_load_doubles_midway(void **state)
{
	const struct caller c = { .work_s = 20e-6, .share = load_doubles };
	struct run r = run_windows(&c, 30);

	(void)state;
	assert_true(fabs(rel(r.est, r.own)) < 0.05);
	assert_true(rel(r.est_flat, r.own) < -0.03);
	assert_true(fabs(r.last_k - 1.25) < 0.05);
}

/*
 * A mix in one process: a paced thread and a flat-out one, each on its own
 * CPU, calling one function. Up to a paced 20,000 calls a second beside a
 * flat-out caller of 1,000 to 50,000, within 5%. The model takes each call
 * to come with the same work (caller_pace.h); the paced thread's calls at
 * 50,000 a second are a fifth of the other's work each, and the factor
 * mixes the two kinds by CPU time, not by calls: +6.8% beside a flat-out
 * 20,000, outside the bound. That is what it returns.
 */
static void test_mix_in_one_process(void **state)
{
	const double rates[] = { 1000, 5000, 20000 }, work_s[] = { 1e-3, 200e-6, 50e-6, 20e-6 };
	struct caller thr[2] = { { .work_s = 10e-6, .share = alone }, { .share = alone } };
	const struct process p = { thr, 2 };
	struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		for (size_t j = 0; j < sizeof(work_s) / sizeof(work_s[0]); j++) {
			thr[0].paced = rates[i];
			thr[1].work_s = work_s[j];
			r = run_process(&p, 30);
			assert_true(fabs(rel(r.est, r.own)) < 0.05);
		}
	thr[0].paced = 50000;
	thr[1].work_s = 50e-6;
	r = run_process(&p, 30);
	assert_true(rel(r.est, r.own) > 0.06 && rel(r.est, r.own) < 0.075);
}

/*
 * A burst the model cannot get right: 100,000 calls a second from 5 ms
 * before a window's attach to 10 ms after it (1,600 calls), nothing else.
 * The window sees 1,000 of them and the series takes that rate for the
 * whole time since the last window (0.52 s): about 26,000, sixteen times
 * the calls. That is what it returns; the windows' spread (rate_spread.h)
 * is what tells such a series from a steady one.
 */
static void test_burst_ending_in_a_window(void **state)
{
	const double open_t = 0.5 + 0.52 * 10, t0 = open_t + 0.001;
	const struct caller c = { .burst = 100000, .burst_a = t0 - 0.005, .burst_b = t0 + 0.010, .on_time = true };
	struct run r = run_windows(&c, 30);

	(void)state;
	assert_true(fabs(r.own - 1500) < 1);
	/* 1,000 calls at k = 1 / (1 - 1000 * 5 us / 25 ms) = 1.25, over 0.52 s of 25 ms. */
	assert_true(fabs(r.est - 1000 * 1.25 * 0.52 / 0.025) < 1);
	assert_true(r.est > 10 * r.own);
}

/* A classic window: what its probes counted after the free is taken out; the attach's calls move its start. */
static void test_span_and_by_free(void **state)
{
	const double per_cpu[2] = { 600, 0 };
	struct window_counts c = {
		.open_t = 1, .attach_s = 0.004, .free_t = 1.029, .attach_calls = 40, .free_calls = 540,
		.free_seen = 540, .all = 600, .pair_ns = 0, .cpu_calls = per_cpu, .nr_cpus = 2,
	};
	struct window_estimate e = window_estimate(&c);

	(void)state;
	/* 500 calls in the 25 ms after the attach: its 40 took 2 ms before it returned. */
	assert_true(fabs(e.t0 - 1.002) < EPS);
	assert_true(fabs(e.by_free - 0.9) < EPS);
	/* No pair cost known: no correction. */
	assert_true(fabs(e.flat_k - 0.9) < EPS);
	assert_true(fabs(window_estimate_k(&e, 1.2) - 1.08) < EPS);
	/* The probes' share is at most half a CPU's span: k at most doubles. */
	c.pair_ns = 1e6;
	e = window_estimate(&c);
	assert_true(fabs(e.flat_k - 0.9 * 2) < EPS);
	/* Its count unread: as counted. */
	c.all = -1;
	e = window_estimate(&c);
	assert_true(e.by_free == 1 && e.flat_k == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_paced_caller),
		cmocka_unit_test(test_cpu_bound_caller),
		cmocka_unit_test(test_load_doubles_midway),
		cmocka_unit_test(test_mix_in_one_process),
		cmocka_unit_test(test_burst_ending_in_a_window),
		cmocka_unit_test(test_span_and_by_free),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
