// SPDX-License-Identifier: GPL-2.0-only
/*
 * One profiling session of the agent and the series it feeds. The session
 * counts calls in the kernel, per function and container. Functions in the
 * links are counted exactly; the budget takes the costliest of them out
 * and samples them in windows instead (profile_windows.c), whose calls,
 * scaled to the whole time, make their sampled series. This file holds the
 * refresh that reads the counts into the series, the relinks that move
 * functions between the links and sampling, and the budget's plans. The
 * cold start (profile_calib.c), the scans (profile_scans.c) and the cheap
 * check between refreshes (profile_trip.c) are state machines of their own.
 */
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_log.h"
#include "agent/duration_buckets.h"
#include "agent/profile_internal.h"
#include "agent/window_plan.h"
#include "util/clock.h"
#include "util/path.h"

/* How often a pending relink is asked whether its old links have closed. */
#define RELINK_POLL_S 0.005
/* A pod not in the kubelet's list asks for it again, at most this often. */
#define KUBELET_REFETCH_S 2.0
/*
 * The kernel's part of a probed call (trap, return trampoline) when the
 * session's calibration could not measure it (not x86-64): what empty
 * programs cost where the defaults were taken (docs/agent.md; bench/compare.py's
 * floor rows measure it). It varies several times over between CPU models,
 * which is why the agent calibrates it.
 */
static const double trap_ns_fallback[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = 850,
	[DLPROF_PROBE_STEPPED] = 9500,
};


int profile_read_raw(struct agent_profile *p, size_t i, struct series_values *v, struct func_profile *f)
{
	int ret = session__read_func(p->s, i, f, p->hist);
	uint64_t cum[DURATION_BUCKETS];

	if (ret)
		return ret;
	memset(v, 0, sizeof(*v));
	v->calls = (double)f->s.calls;
	v->timed = f->entry_only == ENTRY_ONLY_NO;
	duration_buckets_fold(p->hist, cum);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v->duration_le[k] = (double)cum[k];
	v->duration_sum_s = (double)f->s.total_ns / 1e9;
	v->oncpu_s = (double)f->s.oncpu_ns / 1e9;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		v->events[e] = (double)f->s.counters[e];
	return 0;
}

/* A group row's totals as series values (raw: since this session loaded); st: its stats, histogram included. */
static void row_values(const struct func_profile *r, const struct func_stats *st, struct series_values *v)
{
	uint64_t cum[DURATION_BUCKETS];

	memset(v, 0, sizeof(*v));
	v->calls = (double)r->s.calls;
	v->timed = r->entry_only == ENTRY_ONLY_NO;
	duration_buckets_fold(st->hist, cum);
	for (size_t k = 0; k < DURATION_BUCKETS; k++)
		v->duration_le[k] = (double)cum[k];
	v->duration_sum_s = (double)r->s.total_ns / 1e9;
	v->oncpu_s = (double)r->s.oncpu_ns / 1e9;
	for (size_t e = 0; e < DLPROF_MAX_EVENTS; e++)
		v->events[e] = (double)r->s.counters[e];
}

/*
 * A cell's sampled series at now: its estimate up to the last window, run
 * on at that window's rate, so that a scrape between two windows (their
 * period is seconds to a minute) sees the calls made since. When the next
 * window finds a lower rate, the series waits for the estimate to catch up.
 */
void profile_show_sampled(struct agent_profile *p, struct group_cell *c, long id, double now)
{
	sampled_cell__show(c, now);
	metrics_registry__set(p->reg, id, &c->shown);
}

/* --callers: the kernel's rows per (function, caller, container) folded into the caller labels' rows. */
static int fold_callers(struct agent_profile *p, const struct func_profile **rows, const struct func_stats **st,
			size_t *n)
{
	long *fidx = calloc(*n ? *n : 1, sizeof(*fidx));
	int ret;

	if (!fidx)
		return -ENOMEM;
	for (size_t r = 0; r < *n; r++)
		fidx[r] = group_series__func(p->groups, (*rows)[r].func);
	ret = caller_labels__fold(p->callers_k, *rows, *st, fidx, *n, rows, st, n);
	free(fidx);
	return ret;
}

/* Each (function, container[, caller label]) row of the kernel's aggregates whose function want[] marks. */
int profile_for_rows(struct agent_profile *p, const bool *want, row_fn fn)
{
	const struct func_profile *rows;
	const struct func_stats *st;
	size_t n;
	int ret = session__read_groups(p->s, &rows, &n);

	if (ret)
		return ret;
	st = session__group_stats(p->s);
	if (p->callers_k && (ret = fold_callers(p, &rows, &st, &n)))
		return ret;
	for (size_t r = 0; r < n; r++) {
		long fi = group_series__func(p->groups, rows[r].func);
		const struct agent_group *grp;
		struct series_values v;
		struct group_cell *c;

		if (fi < 0 || !want[fi])
			continue;
		c = group_series__cell(p->groups, (size_t)fi, &rows[r].group, &grp);
		if (!c)
			return -ENOMEM;
		row_values(&rows[r], &st[r], &v);
		ret = fn(p, (size_t)fi, c, grp, &rows[r], &v);
		if (ret)
			return ret;
		/* How the native and OTLP histograms split the series' classic buckets (series_fine.h). */
		if (metrics_registry__set_shape(p->reg, c->series_id, st[r].hist) ||
		    metrics_registry__set_shape(p->reg, c->sampled_id, st[r].hist))
			return -ENOMEM;
	}
	return 0;
}

/* The exact series of a (function, container): the kernel's totals less what sampling windows saw. */
static int publish_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		       const struct func_profile *r, const struct series_values *v)
{
	struct series_values exact = {};

	(void)func;
	/* Not (or not yet: its pod unknown) selected: the kernel keeps counting, the series starts whole once it is. */
	if (!grp->selected)
		return 0;
	if (c->series_id < 0) {
		struct series_labels l = { .lib = path_base(r->lib), .function = r->func };

		group_series__labels(grp, &l);
		l.caller = c->caller;
		c->series_id = metrics_registry__series(p->reg, &l);
		if (c->series_id < 0)
			return (int)c->series_id;
	}
	series_add_scaled_diff(&exact, v, &c->off, 1.0);
	metrics_registry__set(p->reg, c->series_id, &exact);
	sampled_cell__published(c, v, p->pl.last_read);
	return 0;
}

/* A (function, container)'s sampled series, made at its first need; its own id, or a negative errno. */
long profile_sampled_series(struct agent_profile *p, struct group_cell *c, const struct agent_group *grp,
			    const struct func_profile *r)
{
	struct series_labels l = { .lib = path_base(r->lib), .function = r->func, .sampled = true };

	if (c->sampled_id < 0) {
		group_series__labels(grp, &l);
		l.caller = c->caller;
		c->sampled_id = metrics_registry__series(p->reg, &l);
	}
	return c->sampled_id;
}

/*
 * At a move between the links and sampling: where the exact series stop
 * (and the sampled ones of the containers that called it start, at 0), or
 * what they leave out.
 */
static int move_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		    const struct func_profile *r, const struct series_values *v)
{
	long id;
	int ret;

	if (p->pl.fs[func].sampled) {
		series_add_scaled_diff(&c->off, v, &c->at_sample, 1.0);
		/* Back into the links: its sampled series ends where its estimate has run to. */
		sampled_cell__enter_links(c, v, p->pl.last_read);
		if (c->sampled_id >= 0)
			metrics_registry__set(p->reg, c->sampled_id, &c->shown);
		return 0;
	}
	/*
	 * Leaving the links: the exact series stops at the switch, the
	 * reactions' calls included. Until a window measures it, its sampled
	 * series runs on at the rate the links saw since its last refresh, as
	 * between windows: a burst that made the agent react goes on unseen,
	 * and a window that then finds it over says so (window_close_row).
	 */
	sampled_cell__leave_links(c, v, p->pl.last_read, p->pl.fs[func].linked_since);
	ret = publish_row(p, func, c, grp, r, v);
	if (ret)
		return ret;
	c->at_sample = *v;
	if (!grp->selected)
		return 0;
	id = profile_sampled_series(p, c, grp, r);
	if (id < 0)
		return (int)id;
	metrics_registry__set(p->reg, id, &c->shown);
	return 0;
}

/* At a refresh: the sampled series run on to now. */
static int project_row(struct agent_profile *p, size_t func, struct group_cell *c, const struct agent_group *grp,
		       const struct func_profile *r, const struct series_values *v)
{
	(void)func;
	(void)r;
	(void)v;
	if (grp->selected && c->sampled_id >= 0 && c->rate_t > 0)
		profile_show_sampled(p, c, c->sampled_id, mono_seconds());
	return 0;
}

static int relink(struct agent_profile *p, const bool *to_sample, double now)
{
	char err[256];
	double t0 = mono_seconds();
	struct func_profile f;
	struct series_values v;
	int ret;

	/*
	 * The links change first (the reads below take ms, and a hot function
	 * fires all the while); the old ones close on threads: the loop goes on
	 * meanwhile, and the budget check with it (a program's start-up,
	 * probed, makes one relink; its hot loop must not wait for it).
	 */
	for (size_t i = 0; i < p->n; i++)
		p->mask[i] = !to_sample[i];
	ret = session__relink_begin(p->s, p->mask, err, sizeof(err));
	if (ret) {
		agent_log("error", "msg=\"%s\"", err);
		return ret;
	}
	if (!p->relinking)
		p->relink_t0 = t0;
	p->relinking = true;
	/*
	 * The totals at the switch: what the exact series keeps, where the
	 * sampled one starts. The functions move whatever a read says: the
	 * links already have.
	 */
	for (size_t i = 0; i < p->n; i++)
		p->mask[i] = to_sample[i] != p->pl.fs[i].sampled;
	ret = profile_for_rows(p, p->mask, move_row);
	for (size_t i = 0; i < p->n; i++) {
		if (to_sample[i] == p->pl.fs[i].sampled)
			continue;
		/*
		 * Its cost as the side it leaves saw it, until the other reads it;
		 * its calls as this refresh read them (p->calls), whose windows'
		 * calls were none of the links'.
		 */
		if (to_sample[i])
			windows__sampled_from(&p->win, i, now, p->pl.fs[i].link_cost_ns_per_s);
		agent_plan__moved(&p->pl, i, to_sample[i], now, p->win.fn[i].cost_ns_per_s, p->calls[i]);
		if (p->o.verbose && !profile_read_raw(p, i, &v, &f))
			agent_log("move", "function=%s to=%s cost_ms_per_s=%.3f", f.func, to_sample[i] ? "sampled" : "links",
				  profile_cost(p, i) / 1e6);
	}
	return ret;
}

/* The pending relink done once its old links have closed: the copies' new links, the windows free again. */
static int finish_relink(struct agent_profile *p)
{
	char err[256];
	double gap_ms;
	int ret;

	if (!p->relinking || !session__relink_ready(p->s))
		return 0;
	ret = session__relink_finish(p->s, &gap_ms, err, sizeof(err));
	p->relinking = false;
	p->st.relinks++;
	p->st.relink_gap_s_total += gap_ms / 1e3;
	p->st.relink_s_total += mono_seconds() - p->relink_t0;
	session__totals(p->s, &p->tot);
	p->st.attached = p->tot.functions_attached;
	/* The links changed: the kernel time before now is no baseline for the next window. */
	windows__relinked(p);
	if (ret)
		agent_log("error", "msg=\"%s\"", err);
	return ret;
}

static void log_budget(const struct agent_profile *p)
{
	agent_log("budget", "sampled=%zu attached=%zu budget_ms_per_s=%.2f exact_ms_per_s=%.2f sampled_full_ms_per_s=%.2f "
		  "duty=%.4f period_s=%.2f call_cost_ns=%.0f install_ms_per_s=%.2f gap_ms=%.1f",
		  p->pl.bp.nr_sampled, p->n - p->pl.bp.nr_sampled, p->o.budget.budget_ns_per_s / 1e6,
		  p->pl.bp.exact_ns_per_s / 1e6, p->pl.bp.sampled_ns_per_s / 1e6, p->pl.bp.duty, p->pl.bp.period_s,
		  p->st.call_cost_ns, p->st.install_ns_per_s / 1e6, p->st.relink_gap_s_total * 1e3);
}

/* The per-call cost: the trap's part, and the programs' own time per call from bpf_stats. */
static void update_call_cost(struct agent_profile *p, uint64_t total_calls)
{
	uint64_t run_ns, runs;

	session__probe_runtime(p->s, &run_ns, &runs);
	if (total_calls > p->last_total_calls + 1000 && run_ns > p->last_run_ns)
		p->cc.prog_ns = (double)(run_ns - p->last_run_ns) / (double)(total_calls - p->last_total_calls);
	p->st.call_cost_ns = p->pl.mix_trap_ns + p->cc.prog_ns;
	p->st.probe_run_ns = run_ns;
	p->st.probe_runs = runs;
	p->last_run_ns = run_ns;
	p->last_total_calls = total_calls;
}

/* The mappings seen, and what the functions in the links cost them per second. */
static void install_stats(struct agent_profile *p)
{
	p->st.mappings_counted = p->inst.counting;
	p->st.mappings = p->inst.total;
	p->st.install_ns_per_s = func_plan__install_ns(p->pl.fs, p->n, &p->inst);
}

/* The plan's moves, when it made any: the links set, the budget logged. */
static int apply_moves(struct agent_profile *p, const struct plan_actions *a, double now)
{
	int ret;

	p->st.expected_ns_per_s = p->pl.bp.expected_ns_per_s;
	if (!a->to_sample)
		return 0;
	ret = relink(p, a->to_sample, now);
	p->st.sampled = a->nr_sampled;
	install_stats(p);
	log_budget(p);
	return ret;
}

/* Removed containers: their series dropped after the grace, the kernel's entries freed with them. */
static void collect(struct agent_profile *p, double now, bool final)
{
	size_t retired, groups;
	int freed;

	if (final)
		return;
	/* --callers: exited processes' rows kept apart, named as they were, their pids free for reuse. */
	if (p->callers_k)
		session__retire_exited_callers(p->s);
	retired = group_series__collect(p->groups, p->reg, now, p->o.series_grace_s);
	groups = group_series__nr_groups(p->groups);
	for (size_t i = 0; i < groups; i++) {
		struct agent_group *g = group_series__at(p->groups, i);

		/* Once its pod is known, or known to be unknowable. */
		if (g->announced || (g->container_id && g->meta_tries < GROUP_META_TRIES))
			continue;
		g->announced = true;
		agent_log("container", "id=%s pod=%s namespace=%s selected=%s", g->container_id ?: "host",
			  g->meta.pod[0] ? g->meta.pod : "-", g->meta.namespace[0] ? g->meta.namespace : "-",
			  g->selected ? "true" : "false");
	}
	if (!retired)
		return;
	p->st.series_retired += retired;
	freed = session__forget_removed_groups(p->s);
	if (freed > 0)
		p->st.groups_freed += (uint64_t)freed;
	agent_log("collect", "series_retired=%zu kernel_entries_freed=%d containers=%zu", retired, freed, groups);
}

/*
 * The world for one step of the plan: the kernel's entries of every
 * function (after every function's, so that an entry between the two
 * reads shows as one since, not as quiet), the costs, the windows'
 * readings, the mappings.
 */
static int read_snapshot(struct agent_profile *p, enum plan_ask ask, double now, struct plan_snapshot *s,
			 uint64_t *all)
{
	*s = (struct plan_snapshot){
		.ask = ask,
		.now = now,
		.calib = p->calib.state,
		.quiet_t = p->trip.quiet_t,
		.calls = p->calls,
		.cc = p->cc,
		.win = p->win.fn,
		.inst = &p->inst,
	};
	if (ask == PLAN_FRESH)
		return 0;
	*all = session__all_calls(p->s);
	return session__read_calls(p->s, p->calls);
}

/* What the read told besides the plan: the programs' cost per call, the cheap check's baseline. */
static void counts_read(struct agent_profile *p, double now, uint64_t all)
{
	update_call_cost(p, p->pl.total);
	trip__read(&p->trip, now, all);
}

/*
 * The exact series the plan marked, from the kernel's aggregates, and the
 * sampled ones run on to now: one walk of the aggregates each, when any.
 */
static int publish_series(struct agent_profile *p, const struct plan_actions *a)
{
	int ret;

	if (a->publish) {
		ret = profile_for_rows(p, a->publish, publish_row);
		if (ret)
			return ret;
		agent_plan__published(&p->pl);
	}
	if (!a->project)
		return 0;
	for (size_t i = 0; i < p->n; i++)
		p->mask[i] = p->pl.fs[i].sampled;
	return profile_for_rows(p, p->mask, project_row);
}

/* The cold start is over: the functions are where they stay. */
static void end_cold_start(struct agent_profile *p, double now)
{
	p->calib.state = CALIB_OFF;
	p->calibrated = true;
	/* The cold start's own mappings (install_cost__calibrate) bring no new workload. */
	if (p->o.budget_on)
		scans__cold_start_over(p, now);
	else
		scans__rebase(p);
}

int agent_profile__tick(struct agent_profile *p, double now, bool final)
{
	enum plan_ask ask = final ? PLAN_FINAL : PLAN_REFRESH;
	struct plan_snapshot snap;
	struct plan_actions a;
	uint64_t all;
	int ret;

	if (agent_plan__waits(ask, windows__busy(&p->win)))
		return -EAGAIN;
	/* The flush closes a window a final refresh finds open. */
	windows__flush(p);
	/* Before the plan, which weighs what linking costs the mappings. */
	install_cost__update(&p->inst, p->s, now);
	ret = read_snapshot(p, ask, now, &snap, &all);
	if (ret)
		return ret;
	agent_plan__step(&p->pl, &snap, &a);
	counts_read(p, now, all);
	trip__refreshed(&p->trip);
	ret = publish_series(p, &a);
	if (ret)
		return ret;
	session__read_totals(p->s, &p->tot);
	p->st.group_overflow = p->tot.group_overflow;
	install_stats(p);
	scans__mappings(p, now);
	collect(p, now, final);
	p->last_tick = now;
	ret = apply_moves(p, &a, now);
	if (a.end_cold_start)
		end_cold_start(p, now);
	metrics_registry__settle(p->reg);
	return ret;
}

int agent_profile__fresh(struct agent_profile *p)
{
	struct plan_snapshot snap;
	struct plan_actions a;
	int ret;

	if (agent_plan__waits(PLAN_FRESH, windows__busy(&p->win)))
		return -EAGAIN;
	read_snapshot(p, PLAN_FRESH, p->pl.last_read, &snap, NULL);
	agent_plan__step(&p->pl, &snap, &a);
	ret = publish_series(p, &a);
	/* A function called for the first time since the refresh: its series exposed now. */
	metrics_registry__settle(p->reg);
	return ret;
}

int agent_profile__react(struct agent_profile *p, double now)
{
	struct plan_snapshot snap;
	struct plan_actions a;
	uint64_t all;
	int ret;

	if (!agent_plan__may_react(&p->pl, p->calib.state, windows__busy(&p->win)))
		return 0;
	ret = read_snapshot(p, PLAN_REACT, now, &snap, &all);
	if (!ret) {
		agent_plan__step(&p->pl, &snap, &a);
		counts_read(p, now, all);
		ret = apply_moves(p, &a, now);
	}
	/* While a relink is pending, the functions it takes out still fire: that is no reason to look less often. */
	trip__reacted(&p->trip, p->pl.bp.changed || p->relinking);
	return ret;
}

double agent_profile__check_s(const struct agent_profile *p)
{
	return p->trip.check_s;
}

/* The cheap check (profile_trip.h): one read of every function's entries. */
bool agent_profile__over_budget(struct agent_profile *p, double now)
{
	if (!agent_plan__may_react(&p->pl, p->calib.state, windows__busy(&p->win)))
		return false;
	return trip__check(&p->trip, now, session__all_calls(p->s), p->last_tick, p->o.budget.budget_ns_per_s,
			   p->pl.mix_trap_ns + p->cc.prog_ns);
}

double agent_profile__windows(struct agent_profile *p, double now)
{
	/* No window while a relink is pending: it could hold a function the new links will. */
	if (p->relinking) {
		finish_relink(p);
		if (p->relinking)
			return now + RELINK_POLL_S;
	}
	return windows__step(p, now);
}

void agent_profile__stats(const struct agent_profile *p, struct agent_profile_stats *st)
{
	*st = p->st;
	st->scans = p->scans.count;
	st->install_measured = p->inst.measured;
	st->install_ns = p->inst.ns_per_func;
	st->scan_s_total = p->scans.s_total;
	/* Of the exposition's moment: a scrape between refreshes makes the groups of rows new since. */
	st->containers = p->groups ? group_series__nr_groups(p->groups) : 0;
	st->dropped = p->tot.incomplete;
	st->orphan_returns = p->tot.orphan_returns;
	st->discovery_lost = p->tot.discovery_lost;
	st->copy_attach_failures = 0;
	if (p->s) {
		size_t n;
		const struct lib_copy_info *c = session__copies(p->s, &n);

		st->idle_copies = 0;
		st->follow_failures = session__follow_failures(p->s);
		for (size_t i = 0; i < n; i++) {
			st->copy_attach_failures += c[i].attach_failures;
			st->idle_copies += c[i].idle;
		}
	}
}

/* A pod's name and namespace from the kubelet's list, asked again when a new pod is not in it. */
static bool kubelet_lookup(void *ctx, const char *uid, struct k8s_meta *m)
{
	struct agent_profile *p = ctx;
	const struct kubelet_pod *k = kubelet_pods_find(&p->kpods, uid);
	double now = mono_seconds();
	char err[512];

	if (!k && (!p->kubelet_t || now - p->kubelet_t >= KUBELET_REFETCH_S)) {
		p->kubelet_t = now;
		if (kubelet_pods_fetch(p->o.kubelet, &p->kpods, err, sizeof(err))) {
			p->st.kubelet_errors++;
			agent_log("error", "what=kubelet msg=\"%s\"", err);
		} else {
			agent_log("kubelet", "pods=%zu", p->kpods.nr);
		}
		k = kubelet_pods_find(&p->kpods, uid);
	}
	if (!k)
		return false;
	snprintf(m->pod, sizeof(m->pod), "%s", k->name);
	snprintf(m->namespace, sizeof(m->namespace), "%s", k->namespace);
	return true;
}

/* --exact: the functions each glob names, among those profiled; a glob that names none is an error. */
static int mark_named(struct agent_profile *p, char *err, size_t err_sz)
{
	const struct probe_table *t = session__table(p->s);

	for (size_t g = 0; g < p->o.nr_exact; g++) {
		const char *glob = p->o.exact[g];
		size_t found = 0;

		for (size_t i = 0; i < p->n; i++) {
			const struct probe_func *f = &t->funcs[i];

			if (fnmatch(glob, f->name, 0) && (!f->demangled || fnmatch(glob, f->demangled, 0)))
				continue;
			p->pl.fs[i].named = true;
			found++;
		}
		if (!found) {
			snprintf(err, err_sz, "--exact: '%s' names none of the functions profiled (dlprof-bpf list --lib "
				 "LIB shows them; --func and --exclude narrow them)", glob);
			return -ENOENT;
		}
	}
	return 0;
}

static int setup(struct agent_profile *p, char *err, size_t err_sz)
{
	struct session_opts so = {
		.sel = p->o.sel,
		.attach_mode = p->o.attach_mode,
		.events = p->o.events,
		.cgroups = p->o.cgroups,
		.nr_cgroups = p->o.nr_cgroups,
		/*
		 * Aggregates per (function, cgroup) in the kernel: the series per
		 * container and pod. With --callers, per (function, process, return
		 * address), each process placed in its container (caller_labels.h).
		 */
		.by = p->o.callers ? ATTR_BY_CALLER : ATTR_BY_CONTAINER,
		.caller_containers = p->o.callers != 0,
		/* With a budget, nothing is probed full time before it is measured (profile_calib.h). */
		.start_unlinked = p->o.budget_on,
		/* ... and the windows' calls are scaled by what their callers' CPU clocks say (caller_pace.h). */
		.track_callers = p->o.budget_on,
	};
	bool no_pmu, cmd_failed;
	int ret;

	p->s = session__new(&so, &no_pmu, err, err_sz);
	if (!p->s)
		return -errno;
	ret = session__prepare(p->s, err, err_sz);
	if (!ret)
		ret = session__load(p->s, NULL, err, err_sz);
	if (ret)
		return ret;
	p->n = session__nr_funcs(p->s);
	p->groups = group_series__new(session__table(p->s),
				      &(struct group_selector){ p->o.k8s_namespace, p->o.k8s_pod });
	if (!p->groups)
		return -ENOMEM;
	if (p->o.kubelet)
		group_series__set_lookup(p->groups, kubelet_lookup, p);
	if (p->o.callers && !(p->callers_k = caller_labels__new(p->n, p->o.callers)))
		return -ENOMEM;
	p->calls = calloc(p->n, sizeof(*p->calls));
	p->mask = calloc(p->n, sizeof(*p->mask));
	p->hist = calloc(HIST_BUCKETS, sizeof(*p->hist));
	if (!p->calls || !p->mask || !p->hist)
		return -ENOMEM;
	/* The windows' length is the attach mode's: the budget's options are complete after it. */
	ret = windows__init(p);
	if (!ret)
		ret = agent_plan__init(&p->pl, p->n, p->o.budget_on, &p->o.budget, mono_seconds());
	if (!ret)
		ret = calib__init(&p->calib, p->n);
	if (ret)
		return ret;
	for (size_t i = 0; i < p->n; i++) {
		const struct probe_func *f = &session__table(p->s)->funcs[i];

		p->pl.fs[i].cls = f->stepped ? DLPROF_PROBE_STEPPED : DLPROF_PROBE_EMULATED;
		p->pl.fs[i].lib = f->lib;
	}
	ret = mark_named(p, err, err_sz);
	if (ret)
		return ret;
	ret = session__start(p->s, &cmd_failed, err, err_sz);
	if (ret && !err[0])
		snprintf(err, err_sz, "cannot attach: %s", strerror(-ret));
	/* Nothing is linked yet: the libraries' mappings without breakpoints. */
	if (!ret && p->o.budget_on && (ret = install_cost__init(&p->inst, p->s)))
		snprintf(err, err_sz, "out of memory");
	return ret;
}

/*
 * What a probed call costs the kernel beyond the programs, per class: the
 * session's calibration (a probe pair on the agent's own code, with these
 * programs and this attach mode) less the programs' time in it. A pair's
 * cost varies several times over between CPU models, so no constant holds
 * (docs/agent.md; bench/compare.py's floor rows measure it).
 */
static void set_trap_costs(struct agent_profile *p)
{
	const char *source = "calibrated";

	p->cc.prog_ns = (double)p->tot.probe_calib_prog_ns;
	for (int c = 0; c < DLPROF_PROBE_CLASSES; c++) {
		double pair = (double)p->tot.probe_pair_ns[c];

		if (p->o.trap_ns > 0) {
			p->cc.trap_ns[c] = p->o.trap_ns;
			source = "DLPROF_AGENT_TRAP_NS";
		} else if (p->tot.compensated && pair > 0) {
			p->cc.trap_ns[c] = pair > p->cc.prog_ns ? pair - p->cc.prog_ns : pair;
		} else {
			p->cc.trap_ns[c] = trap_ns_fallback[c];
			source = "default";
		}
		p->st.trap_ns[c] = p->cc.trap_ns[c];
	}
	/*
	 * Until bpf_stats has counted real calls: the calibration's share. A
	 * calibrated pair without it is the whole cost; an assumed trap gets as
	 * much again for the programs.
	 */
	if (p->cc.prog_ns <= 0 && strcmp(source, "calibrated"))
		p->cc.prog_ns = p->cc.trap_ns[DLPROF_PROBE_EMULATED];
	p->pl.mix_trap_ns = p->cc.trap_ns[DLPROF_PROBE_EMULATED];
	p->st.call_cost_ns = p->pl.mix_trap_ns + p->cc.prog_ns;
	agent_log("budget", "trap_ns_%s=%.0f trap_ns_%s=%.0f prog_ns=%.0f source=%s",
		  probe_class_name(DLPROF_PROBE_EMULATED), p->cc.trap_ns[DLPROF_PROBE_EMULATED],
		  probe_class_name(DLPROF_PROBE_STEPPED), p->cc.trap_ns[DLPROF_PROBE_STEPPED], p->cc.prog_ns, source);
}

/*
 * The cold start (profile_calib.h): every function sampled, not held (it
 * returns as soon as it is measured cheap), the batches due after a
 * baseline of the machine's kernel time (the windows' cost).
 */
static void start_cold(struct agent_profile *p, double now)
{
	agent_plan__start_cold(&p->pl);
	for (size_t i = 0; i < p->n; i++)
		windows__sampled_from(&p->win, i, now, 0);
	p->st.sampled = p->n;
	calib__start(&p->calib, p->n, now + WINDOW_BASELINE_S);
	agent_log("budget", "cold_start=true sampled=%zu batch=%zu window_ms=%.0f first_window_s=%.1f", p->n,
		  calib__batch(), window_calib_len_s() * 1e3, WINDOW_BASELINE_S);
}

struct agent_profile *agent_profile__start(const struct agent_profile_opts *o, struct metrics_registry *reg,
					   char *err, size_t err_sz)
{
	struct agent_profile *p = calloc(1, sizeof(*p));
	int ret;

	if (!p) {
		snprintf(err, err_sz, "out of memory");
		return NULL;
	}
	p->o = *o;
	p->reg = reg;
	ret = setup(p, err, err_sz);
	if (ret) {
		agent_profile__free(p);
		errno = -ret;
		return NULL;
	}
	session__totals(p->s, &p->tot);
	p->st.functions = p->n;
	p->st.attached = p->tot.functions_attached;
	p->st.skipped = p->tot.functions_skipped;
	p->st.attach_mode = p->tot.attach_mode;
	p->st.compensated = p->tot.compensated;
	p->st.events = p->tot.events;
	p->st.nr_events = p->tot.nr_events;
	p->st.attach_s = p->tot.attach_ms / 1e3;
	p->st.budget_ns_per_s = o->budget_on ? o->budget.budget_ns_per_s : 0;
	set_trap_costs(p);
	p->last_tick = p->pl.last_read = mono_seconds();
	for (size_t i = 0; i < p->n; i++)
		p->pl.fs[i].linked_since = p->last_tick;
	windows__rebase(p);
	session__probe_runtime(p->s, &p->last_run_ns, &(uint64_t){ 0 });
	trip__init(&p->trip, p->last_tick, session__all_calls(p->s));
	if (o->budget_on)
		start_cold(p, p->last_tick);
	return p;
}

bool agent_profile__ready(const struct agent_profile *p)
{
	/* Once the first plan's links are in: later relinks leave the agent ready. */
	return p->calibrated && (p->st.relinks || !p->relinking);
}

int agent_profile__poll_fd(const struct agent_profile *p)
{
	return session__poll_fd(p->s);
}

void agent_profile__drain(struct agent_profile *p)
{
	session__drain(p->s);
}

void agent_profile__free(struct agent_profile *p)
{
	struct session_stop_wait w = { .patience_ms = 5000, .cancel_fd = -1 };

	if (!p)
		return;
	windows__free(p);
	if (p->s) {
		session__stop(p->s, &w);
		session__totals(p->s, &p->tot);
		if (p->tot.functions_attached)
			agent_log("detach", "functions=%zu ms=%.1f%s", p->n, p->tot.detach_ms,
				  p->tot.detach_unfinished ? " unfinished=true" : "");
	}
	session__free(p->s);
	group_series__free(p->groups);
	caller_labels__free(p->callers_k);
	kubelet_pods_free(&p->kpods);
	agent_plan__free(&p->pl);
	free(p->calls);
	free(p->mask);
	calib__free(&p->calib);
	free(p->hist);
	install_cost__free(&p->inst);
	free(p);
}
