// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_log.h"
#include "agent/profile_internal.h"
#include "agent/window_plan.h"
#include "probe/attach.h"
#include "util/clock.h"

/*
 * A sampled function's cost is its last window's, or what it was, halved
 * every this many seconds: a quiet spell between bursts does not bring it
 * back into the links (and the next burst out of them, with a gap each time).
 */
#define SAMPLED_COST_HALF_LIFE_S 60.0
/*
 * Sampling windows by attach mode. A sampled series runs on at its
 * windows' pace, and a busy machine's pace moves from one tenth of a second
 * to the next: the series errs by that spread over the root of the windows
 * it rests on, so at one duty shorter windows and more of them are better.
 * Session and multi links stop counting when freed, and their breakpoints
 * go before the close waits for its grace periods: their windows are short,
 * and the duty counts them until the free. Classic probes are closed one
 * after the other, a grace period each, and trap until then: each window
 * pays that, and the duty counts it.
 */
static const struct window_timing {
	double len_s;			/* how long a window lasts */
	bool close_probed;		/* the probes trap until the close ends */
} window_timing[] = {
	[ATTACH_SESSION] = { 0.025, false },
	[ATTACH_MULTI] = { 0.025, false },
	[ATTACH_CLASSIC] = { 0.1, true },
};

/* A call's cost is measured over at least this much window time, and this many calls, at a time. */
#define COST_WINDOWS_S 0.1
#define COST_CALLS 1000
/* ... and what was measured so long ago weighs half as much. */
#define COST_HALF_LIFE_S 120.0
/*
 * The kernel counts its time in ticks, and a short window adds less than
 * one: the ticks' noise outweighs what the windows add until some hundreds
 * of them are summed. Until then a sampled call costs its calibration.
 */
#define COST_MIN_WINDOWS 400
/* The last window's links, at the flush: how long they may take to close before its counts are read anyway. */
#define WINDOW_CLOSE_PATIENCE_MS 5000

/* The agent's CPU time, all its threads (the windows' closes run on their own). */
static double process_cpu_s(void)
{
	return clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/*
 * The machine's kernel time so far (system, irq, softirq; USER_HZ ticks of
 * /proc/stat), in seconds; < 0 when unreadable. A probe's trap and program
 * run in the kernel: a window's extra kernel time is what its probes cost,
 * whatever instruction they sit on (emulated, single-stepped).
 */
static double kernel_cpu_s(void)
{
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	FILE *f = fopen("/proc/stat", "re");
	double v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle, &iowait, &irq,
		   &softirq) == 7)
		v = (double)(sys + irq + softirq) / (double)sysconf(_SC_CLK_TCK);
	fclose(f);
	return v;
}

/*
 * The cost of a call in the windows, from the kernel time they added over
 * the gaps before them. The kernel counts its time in ticks, and a short
 * window adds less than one: the windows' extra time and calls are summed,
 * those of the last minutes weighing most (COST_HALF_LIFE_S), and a
 * window that added less than its gap's pace counts too (dropped, the
 * noise of the ticks would lift the cost). A chunk of windows is measured
 * once there is enough of both it and its gaps to outweigh a tick; the
 * sums are taken for the cost once they hold COST_MIN_WINDOWS.
 */
static void measure_window_cost(struct agent_profile *p, double t1, double calls)
{
	struct profile_windows *w = &p->win;
	struct window_cost_sums *c = &w->cost;
	double sys1 = kernel_cpu_s(), extra, keep;

	if (sys1 < 0 || w->sys0 < 0 || w->last_sys < 0) {
		*c = (struct window_cost_sums){};
		goto out;
	}
	c->gap_sys += w->sys0 - w->last_sys;
	c->gap_s += w->t0 - w->last_sys_t;
	c->win_sys += sys1 - w->sys0;
	c->win_s += t1 - w->t0;
	c->calls += calls;
	c->windows++;
	if (c->gap_s < WINDOW_BASELINE_S || c->win_s < COST_WINDOWS_S || c->calls < COST_CALLS)
		goto out;
	extra = c->win_sys - c->gap_sys / c->gap_s * c->win_s;
	keep = w->cost_t > 0 ? exp2(-(t1 - w->cost_t) / COST_HALF_LIFE_S) : 0;
	w->extra_sys_s = w->extra_sys_s * keep + extra;
	w->extra_calls = w->extra_calls * keep + c->calls;
	w->extra_windows = w->extra_windows * keep + c->windows;
	w->cost_t = t1;
	*c = (struct window_cost_sums){};
	p->st.sampled_call_cost_ns = w->extra_sys_s > 0 ? w->extra_sys_s * 1e9 / w->extra_calls : 0;
	w->sampled_call_ns = w->extra_windows >= COST_MIN_WINDOWS ? p->st.sampled_call_cost_ns : 0;
out:
	w->last_sys = sys1;
	w->last_sys_t = t1;
}

/* A row's base: its totals at the window's start, or zero for a row new since. */
static const struct series_values *row_base(const struct agent_profile *p, const struct group_cell *c)
{
	static const struct series_values zero;

	return c->win_seq == p->win.seq ? &c->win0 : &zero;
}

/*
 * How many calls a row's callers would have made unprobed for each the
 * window saw: what their CPU clocks say (profile_callers.h) once they say
 * it; for callers gone before their clocks could (a stream of short-lived
 * processes), what the stream's mappings say (stream_pace.h); else the
 * model of callers that run flat out (window_estimate.h).
 */
static double row_factor(const struct agent_profile *p, const struct agent_group *grp)
{
	double pace = callers__factor(&p->callers, grp->container_id);

	if (pace <= 0)
		pace = stream_pace_factor(&p->win.stream);
	return window_estimate_k(&p->win.est, pace);
}

/* At a window's end: each row's calls to its group's callers, and the factors' mean. */
static int window_calls_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
			    const struct func_profile *r, const struct series_values *v)
{
	double d = v->calls - row_base(p, c)->calls;

	(void)func;
	(void)r;
	if (d > 0)
		callers__add_calls(&p->callers, grp->container_id, d);
	return 0;
}

/* At a window's start: where each (function, container) of it stands. */
static int window_open_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
			   const struct func_profile *r, const struct series_values *v)
{
	(void)func;
	(void)grp;
	(void)r;
	c->win0 = *v;
	c->win_seq = p->win.seq;
	return 0;
}

/*
 * At a window's end: its calls in each (function, container), as many as
 * the program would have made unprobed (row_factor), extrapolated to the time
 * since the function's sampled series were last brought up to date, into
 * that container's sampled series; their rate runs it on from here.
 */
static int window_close_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
			    const struct func_profile *r, const struct series_values *v)
{
	const struct profile_windows *w = &p->win;
	/* A row new since the window began: all of its calls are the window's. */
	const struct series_values *base = row_base(p, c);
	double span = w->close_t - w->t0, k = row_factor(p, grp);
	bool steady;
	long id;

	if (!grp->selected || span <= 0 || (v->calls <= base->calls && c->sampled_id < 0))
		return 0;
	id = profile_sampled_series(p, c, grp, r);
	if (id < 0)
		return (int)id;
	p->win.k_seen += (v->calls - base->calls) * k;
	p->win.k_calls += v->calls - base->calls;
	steady = rate_spread_add(&c->spread, (v->calls - base->calls) * k / span, v->calls - base->calls);
	metrics_registry__set_error(p->reg, id, rate_spread_error(&c->spread));
	p->st.unsteady_calls += sampled_cell__window(c, v, base, k, w->t0, w->close_t, w->fn[func].covered_until, steady);
	metrics_registry__set(p->reg, id, &c->shown);
	return 0;
}

/* At a window's start (before its attach), or its end (once its links are closed, at now: the middle of their close). */
static int read_window_totals(struct agent_profile *p, bool start, double now)
{
	struct profile_windows *w = &p->win;
	double seen = 0, top = 0, span = now - w->t0, call_ns = start ? 0 : w->sampled_call_ns;
	const char *top_name = "-";
	int ret;

	/* The containers' sampled series, before the functions' coverage moves on. */
	w->close_t = now;
	w->k_seen = w->k_calls = 0;
	ret = profile_for_rows(p, w->in_window, start ? window_open_row : window_close_row);
	if (ret)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		struct window_func *wf = &w->fn[i];
		struct series_values v;
		struct func_profile f;

		if (!w->in_window[i])
			continue;
		ret = profile_read_raw(p, i, &v, &f);
		if (ret)
			return ret;
		if (start) {
			wf->v0 = v;
			continue;
		}
		if (span <= 0)
			continue;
		seen += v.calls - wf->v0.calls;
		if (v.calls - wf->v0.calls > top) {
			top = v.calls - wf->v0.calls;
			top_name = f.func;
		}
		wf->measured = true;
		/*
		 * Measured in the windows when it could be, never below the
		 * calibration: the kernel's ticks may read less.
		 */
		wf->cost_ns_per_s = fmax((v.calls - wf->v0.calls) / span * fmax(call_ns, profile_call_ns(p, i)),
					 wf->cost_ns_per_s * exp2(-(now - wf->covered_until) / SAMPLED_COST_HALF_LIFE_S));
		wf->covered_until = now;
	}
	/*
	 * Its bounds by the wall clock too, to be set against what a workload
	 * counts itself (bench/); the busiest callers' CPU shares outside the
	 * windows and inside less the probes (-1: not known yet).
	 */
	if (!start && p->o.verbose) {
		double out = -1, in_net = -1;

		callers__top_shares(&p->callers, &out, &in_net);
		agent_log("window", "functions=%zu ms=%.1f calls=%.0f unprobed_factor=%.2f call_ns=%.0f top=%s top_calls=%.0f "
			  "from_unix=%.4f calls_at_free=%.0f by_free=%.3f stream_factor=%.3f callers_cpu_out=%.3f callers_cpu_in=%.3f "
			  "callers_exact=%zu/%zu%s",
			  w->funcs, span * 1e3, seen, w->k_calls > 0 ? w->k_seen / w->k_calls : w->est.flat_k,
			  call_ns > 0 ? call_ns : p->st.call_cost_ns, top_name, top,
			  clock_seconds(CLOCK_REALTIME) - (mono_seconds() - w->t0), w->free_seen, w->est.by_free,
			  stream_pace_factor(&w->stream), out, in_net,
			  p->callers.win_exact, p->callers.win_procs, w->kind->log_tag);
	}
	return 0;
}

/*
 * A sampling window closes once its calls have cost what its period's
 * share of the budget pays for (and it has seen at least
 * WINDOW_ENOUGH_CALLS): a function idle when it was sampled may be hot now,
 * and the window would otherwise hold the program back for all its length.
 */
static double sample_calls_max(const struct agent_profile *p)
{
	double call_ns = fmax(p->win.sampled_call_ns, p->pl.mix_trap_ns + p->cc.prog_ns);
	double left = p->o.budget.budget_ns_per_s - p->pl.bp.exact_ns_per_s;

	return fmax(left * p->pl.bp.period_s / call_ns, WINDOW_ENOUGH_CALLS);
}

/* A sampling window's functions: every sampled one seen called. */
static size_t sample_pick(struct agent_profile *p, bool *in)
{
	size_t funcs = 0;

	for (size_t i = 0; i < p->n; i++) {
		in[i] = p->pl.fs[i].sampled && !scans__idle(p, i);
		funcs += in[i];
	}
	return funcs;
}

static double sample_len_s(const struct agent_profile *p)
{
	return p->o.budget.window_s;
}

static void sample_opened(struct agent_profile *p)
{
	p->win.next = window_next_sample_opened(p->win.t0, p->pl.bp.period_s);
}

static void sample_later(struct agent_profile *p, double now)
{
	p->win.next = window_next_sample_later(now, p->pl.bp.period_s);
}

void windows__count(struct agent_profile *p, double t1)
{
	p->st.windows++;
	p->st.window_s_total += t1 - p->win.open_t;
}

/* The probes are in from before the attach returns until they are freed, or the close ends: the duty counts it. */
static void sample_closed(struct agent_profile *p, double t1)
{
	struct profile_windows *w = &p->win;

	windows__count(p, t1);
	w->next = window_next_sample_closed(w->next, w->open_t, w->end, t1, mono_seconds(), w->close_probed,
					    p->pl.bp.duty, p->pl.bp.period_s);
}

static double sample_next(const struct agent_profile *p)
{
	return p->win.next;
}

const struct window_kind sample_window = {
	.log_tag = "",
	.measures_cost = true,
	.pick = sample_pick,
	.len_s = sample_len_s,
	.calls_max = sample_calls_max,
	.opened = sample_opened,
	.later = sample_later,
	.closed = sample_closed,
	.next = sample_next,
};

/* The entries of every function per CPU so far, into calls[nr_cpus]; zeros when unreadable. */
static void cpu_calls(struct agent_profile *p, __u64 *calls)
{
	size_t nr;
	const __u64 *cpu;

	session__all_calls(p->s);
	cpu = session__all_calls_cpu(p->s, &nr);
	for (size_t c = 0; c < p->win.nr_cpus; c++)
		calls[c] = cpu && nr == p->win.nr_cpus ? cpu[c] : 0;
}

/* The calls of the window's functions since it began (one batch read); < 0 when unreadable. */
static double window_calls(struct agent_profile *p)
{
	double seen = 0;

	if (session__read_calls(p->s, p->calls))
		return -1;
	for (size_t i = 0; i < p->n; i++)
		if (p->win.in_window[i])
			seen += (double)p->calls[i] - p->win.fn[i].v0.calls;
	return seen;
}

/*
 * What a call of the window cost its caller: its functions' classes'
 * calibrations weighted by their calls, or what the windows' kernel time
 * says when more. 0: no call. p->calls holds the window's end.
 */
static double window_pair_ns(const struct agent_profile *p)
{
	const struct profile_windows *w = &p->win;
	double seen = 0, pair_ns = 0;

	for (size_t i = 0; i < p->n; i++) {
		double d = (double)p->calls[i] - p->win.fn[i].v0.calls;

		if (!w->in_window[i] || d <= 0)
			continue;
		seen += d;
		pair_ns += d * profile_call_ns(p, i);
	}
	return seen > 0 ? fmax(pair_ns / seen, w->sampled_call_ns) : 0;
}

/* Every library's mappings so far, as the kernel counted them; false when the session does not count them. */
static bool read_maps(struct agent_profile *p, uint64_t *maps)
{
	return p->inst.counting && p->win.nr_libs && !session__read_mappings(p->s, maps);
}

/* The window's libraries' mappings between readings a and b. */
static double maps_between(const struct profile_windows *w, const uint64_t *a, const uint64_t *b)
{
	double sum = 0;

	for (size_t k = 0; k < w->nr_libs; k++)
		if (w->lib_in[k])
			sum += (double)(b[k] - a[k]);
	return sum;
}

/*
 * A sampling window, and the time from the last window's close to its own
 * (now_ok: maps_now read at now), as the mappings of its libraries saw
 * them, into the stream's sums (stream_pace.h). The series stand for that
 * whole time, its attach and close included, where a stream may slow the
 * most (forks wait while probes go in or out). The window's span is its
 * calls' (from est.t0 to the free): of the mappings made while its attach
 * ran, the part of the attach that the span holds.
 */
static void stream_window(struct agent_profile *p, bool now_ok, double now)
{
	struct profile_windows *w = &p->win;
	double attach_end = w->open_t + w->attach_s, in_span = 0;

	if (!w->maps_ok || !w->closed_ok || !now_ok)
		return;
	if (w->attach_s > 0)
		in_span = fmin(fmax((attach_end - w->est.t0) / w->attach_s, 0), 1);
	stream_pace_add(&w->stream, maps_between(w, w->maps_closed, w->maps_now), now - w->closed_t,
			maps_between(w, w->maps_attached, w->maps_free) +
				in_span * maps_between(w, w->maps_open, w->maps_attached),
			w->free_t - w->est.t0);
}

static int open_window(struct agent_profile *p, double now, const struct window_kind *kind)
{
	struct profile_windows *w = &p->win;
	char err[256];
	int ret;

	w->cpu0 = process_cpu_s();
	for (size_t i = 0; i < p->n; i++)
		w->in_window[i] = false;
	w->kind = kind;
	w->funcs = kind->pick(p, w->in_window);
	if (!w->funcs) {
		kind->later(p, now);
		return 0;
	}
	/*
	 * Where the window's functions stand, read before their probes go in:
	 * sampled, they are in no link, so nothing counts them meanwhile, and
	 * a hot one does not fire through the ms these reads take.
	 */
	w->seq++;
	ret = read_window_totals(p, true, mono_seconds());
	if (ret) {
		kind->later(p, now);
		return ret;
	}
	for (size_t k = 0; k < w->nr_libs; k++)
		w->lib_in[k] = false;
	for (size_t i = 0; i < p->n; i++)
		if (w->in_window[i] && p->pl.fs[i].lib < w->nr_libs)
			w->lib_in[p->pl.fs[i].lib] = true;
	/* Where the mappings stand as it begins to open: its attach's share (stream_window). */
	w->maps_ok = read_maps(p, w->maps_open);
	w->open_t = mono_seconds();
	if (kind == &sample_window)
		callers__open(&p->callers, p->s);
	w->calls0 = session__all_calls(p->s);
	cpu_calls(p, w->cpu_calls);
	w->calls_max = kind->calls_max(p);
	w->check_s = window_sched_default.check_s;
	w->links = session__links_attach(p->s, w->in_window, err, sizeof(err));
	if (!w->links) {
		ret = -errno;
		agent_log("error", "what=window msg=\"%s\"", err);
		kind->later(p, now);
		return ret;
	}
	/* Where its probes' count stands once they are all in (probe_span). */
	w->attach_s = mono_seconds() - w->open_t;
	w->attach_calls = session__all_calls(p->s) - w->calls0;
	w->maps_ok &= read_maps(p, w->maps_attached);
	w->t0 = w->open_t + w->attach_s;
	if (kind == &sample_window)
		callers__attached(&p->callers, p->s);
	if (kind->opened)
		kind->opened(p);
	w->sys0 = kernel_cpu_s();
	w->end = mono_seconds() + kind->len_s(p);
	return 0;
}

/*
 * The window's links go at once, on a thread; its counts are read once they
 * have closed (close_window_finish), so that a hot function does not fire
 * through the ms that reading takes, and every call its probes saw is in.
 */
static void close_window_begin(struct agent_profile *p)
{
	struct profile_windows *w = &p->win;
	double t1;

	/* The callers' clocks while the probes are still in: the gap from the links' close is theirs alone. */
	if (w->kind == &sample_window)
		callers__freed(&p->callers, p->s);
	t1 = mono_seconds();
	/*
	 * What a call cost in it, from the kernel time until now. Not in a
	 * scan: a few calls, and the next window's baseline would be shorter
	 * than a scan's period.
	 */
	w->free_seen = -1;
	if (w->kind->measures_cost) {
		w->free_seen = window_calls(p);
		if (w->free_seen >= 0)
			measure_window_cost(p, t1, w->free_seen);
	}
	w->free_calls = session__all_calls(p->s) - w->calls0;
	w->maps_ok &= read_maps(p, w->maps_free);
	session__links_free(p->s, w->links);
	w->links = NULL;
	w->closing = true;
	w->free_t = t1;
}

/* Its calls per CPU, from its start until now, into w->cpu_win. */
static void cpu_calls_since(struct agent_profile *p)
{
	struct profile_windows *w = &p->win;
	__u64 *now = w->cpu_calls + w->nr_cpus;

	cpu_calls(p, now);
	for (size_t c = 0; c < w->nr_cpus; c++)
		w->cpu_win[c] = (double)(now[c] - w->cpu_calls[c]);
}

/* What the window counted, for its estimate (window_estimate.h). p->calls holds its end (window_calls). */
static struct window_estimate estimate_window(struct agent_profile *p, double all)
{
	struct profile_windows *w = &p->win;
	struct window_counts c = {
		.open_t = w->open_t,
		.attach_s = w->attach_s,
		.free_t = w->free_t,
		.attach_calls = (double)w->attach_calls,
		.free_calls = (double)w->free_calls,
		.free_seen = w->free_seen,
		.all = all,
		.pair_ns = all < 0 ? 0 : window_pair_ns(p),
		.cpu_calls = w->cpu_win,
		.nr_cpus = w->nr_cpus,
	};

	if (all >= 0 && c.pair_ns > 0 && w->nr_cpus)
		cpu_calls_since(p);
	return window_estimate(&c);
}

static int close_window_finish(struct agent_profile *p)
{
	struct profile_windows *w = &p->win;
	/* One batch read of where the window ended, for both factors. */
	double t1 = w->free_t, all = window_calls(p), now = mono_seconds();
	bool now_ok = read_maps(p, w->maps_now);
	uint64_t *swap;
	int ret;

	w->est = estimate_window(p, all);
	w->t0 = w->est.t0;
	/* The callers' clocks and the stream's mappings: each group's calls in the window, and its factor from them. */
	if (w->kind == &sample_window) {
		double total = (double)session__all_calls(p->s) - (double)w->calls0;
		double in_span = total > 0 ? ((double)w->free_calls - (double)w->attach_calls) / total : 0;

		callers__closed(&p->callers, p->s);
		if (all >= 0 && profile_for_rows(p, w->in_window, window_calls_row))
			callers__open(&p->callers, p->s);	/* its groups' readings dropped: no calls */
		callers__close(&p->callers, all >= 0 ? window_pair_ns(p) : 0, fmax(in_span, 0));
		stream_window(p, now_ok, now);
	}
	ret = read_window_totals(p, false, t1);
	w->closing = false;
	/* The next sampling window's whole time starts here, whatever kind of window this was. */
	swap = w->maps_closed;
	w->maps_closed = w->maps_now;
	w->maps_now = swap;
	w->closed_ok = now_ok;
	w->closed_t = now;
	/* The window's own calls are budgeted by its duty: no burst of the links' functions. */
	trip__window_closed(&p->trip, mono_seconds(), session__all_calls(p->s), w->calls0);
	w->kind->closed(p, t1);
	metrics_registry__settle(p->reg);
	return ret;
}

/*
 * What the planner needs of the world now. The calls and the links' state
 * only when it looks at them: each read crosses into the kernel. batches:
 * as it was at the step's start (a batch that could not open may end
 * them, and the step goes on as it began).
 */
static void read_snapshot(struct agent_profile *p, double now, bool batches, bool tried_window, bool tried_scan,
			  struct plan_snapshot *snap)
{
	const struct profile_windows *w = &p->win;
	struct window_snapshot *s = &snap->windows;

	*snap = (struct plan_snapshot){ .ask = PLAN_WINDOWS, .now = now, .calib = p->calib.state };
	*s = (struct window_snapshot){
		.now = now,
		.any_sampled = p->pl.bp.nr_sampled > 0,
		.batches = batches,
		.plan_due = p->calib.state == CALIB_PLAN_DUE,
		.next = (batches ? &calib_window : &sample_window)->next(p),
		.scan_next = scan_window.next(p),
		.open = w->links != NULL,
		.t0 = w->t0,
		.end = w->end,
		.calls_max = w->calls_max,
		.check_s = w->check_s,
		.closing = w->closing,
		.tried_window = tried_window,
		.tried_scan = tried_scan,
	};
	if (s->open && !tried_window && !tried_scan)
		s->seen = (double)(session__all_calls(p->s) - w->calls0);
	if (s->closing)
		s->closed = session__links_closed(p->s);
	/* After the reads: a wake from the clock counts from when they were done. */
	s->clock = mono_seconds();
}

double windows__step(struct agent_profile *p, double now)
{
	bool batches = p->calib.state == CALIB_BATCHES, tried_window = false, tried_scan = false;

	for (;;) {
		struct plan_snapshot s;
		struct plan_actions plan;
		struct window_action a;

		read_snapshot(p, now, batches, tried_window, tried_scan, &s);
		agent_plan__step(&p->pl, &s, &plan);
		a = plan.window;
		switch (a.what) {
		case WINDOW_WAIT:
			p->win.check_s = a.check_s;
			return a.wake;
		case WINDOW_CLOSE_BEGIN:
			close_window_begin(p);
			break;
		case WINDOW_CLOSE_FINISH:
			close_window_finish(p);
			break;
		case WINDOW_OPEN_SAMPLE:
		case WINDOW_OPEN_CALIB:
			tried_window = true;
			open_window(p, now, a.what == WINDOW_OPEN_CALIB ? &calib_window : &sample_window);
			break;
		case WINDOW_OPEN_SCAN:
			tried_scan = true;
			open_window(p, now, &scan_window);
			break;
		}
	}
}

bool windows__busy(const struct profile_windows *w)
{
	return w->links || w->closing;
}

void windows__flush(struct agent_profile *p)
{
	if (p->win.links)
		close_window_begin(p);
	if (p->win.closing) {
		session__links_wait_closed(p->s, WINDOW_CLOSE_PATIENCE_MS);
		close_window_finish(p);
	}
}

void windows__rebase(struct agent_profile *p)
{
	p->win.cost = (struct window_cost_sums){};
	p->win.last_sys = kernel_cpu_s();
	p->win.last_sys_t = mono_seconds();
}

void windows__relinked(struct agent_profile *p)
{
	windows__rebase(p);
	/*
	 * Not sooner than a baseline from now, and not sooner than planned: a
	 * newly sampled function's series covers the time from now at its first
	 * window, whenever that is, and windows out of plan would cost above it.
	 */
	p->win.next = fmax(p->win.next, mono_seconds() + WINDOW_BASELINE_S);
}

void windows__sampled_from(struct profile_windows *w, size_t i, double now, double cost_ns_per_s)
{
	w->fn[i].covered_until = now;
	w->fn[i].cost_ns_per_s = cost_ns_per_s;
}

double windows__cpu_s(const struct agent_profile *p)
{
	return process_cpu_s() - p->win.cpu0;
}

int windows__init(struct agent_profile *p)
{
	struct profile_windows *w = &p->win;
	int mode = session__attach_mode(p->s);
	const struct window_timing *t = &window_timing[mode > ATTACH_AUTO && mode <= ATTACH_CLASSIC ? mode :
									  ATTACH_CLASSIC];

	p->o.budget.window_s = t->len_s;
	w->close_probed = t->close_probed;
	w->kind = &sample_window;
	callers__init(&p->callers);
	w->in_window = calloc(p->n, sizeof(*w->in_window));
	w->fn = calloc(p->n ?: 1, sizeof(*w->fn));
	session__all_calls_cpu(p->s, &w->nr_cpus);
	/* Two rows: at the window's start, and at its end. */
	w->cpu_calls = calloc(2 * w->nr_cpus + 1, sizeof(*w->cpu_calls));
	w->cpu_win = calloc(w->nr_cpus + 1, sizeof(*w->cpu_win));
	w->nr_libs = session__table(p->s)->nr_libs;
	w->lib_in = calloc(w->nr_libs + 1, sizeof(*w->lib_in));
	w->maps_block = calloc(MAPS_READINGS * (w->nr_libs + 1), sizeof(*w->maps_block));
	if (!w->in_window || !w->fn || !w->cpu_calls || !w->cpu_win || !w->lib_in || !w->maps_block)
		return -ENOMEM;
	w->maps_closed = w->maps_block;
	w->maps_open = w->maps_closed + (w->nr_libs + 1);
	w->maps_attached = w->maps_open + (w->nr_libs + 1);
	w->maps_free = w->maps_attached + (w->nr_libs + 1);
	w->maps_now = w->maps_free + (w->nr_libs + 1);
	return 0;
}

void windows__free(struct agent_profile *p)
{
	session__links_free(p->s, p->win.links);
	p->win.links = NULL;
	free(p->win.in_window);
	free(p->win.fn);
	free(p->win.cpu_calls);
	free(p->win.cpu_win);
	free(p->win.lib_in);
	free(p->win.maps_block);
	callers__destroy(&p->callers);
}
