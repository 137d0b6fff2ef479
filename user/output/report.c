// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model/probe_class.h"
#include "output/overhead_note.h"
#include "output/caller_nest.h"
#include "output/report.h"
#include "util/path.h"

/* Why a function was probed at entry only: the table's footer line (the names: model/probe_class.h). */
static const struct {
	const char *footer;
} entry_only_whys[] = {
	[ENTRY_ONLY_RETURN_ADDRESS] = {
		"they keep their own return address (setjmp, getcontext, vfork, dlsym), which a return probe would break" },
	[ENTRY_ONLY_UNWINDING] = {
		"they reach code that may unwind through them (a throw, a cancellation point, a callback) and this kernel lets no probe repair the stack (--unwind unsafe times them)" },
};

#define NR_WHYS (sizeof(entry_only_whys) / sizeof(entry_only_whys[0]))

const char *report_entry_only_reason(enum entry_only_why why)
{
	return entry_only_why_name(why);
}

static int str_cmp(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int row_cmp(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c;

	if (x->s.total_ns != y->s.total_ns)
		return x->s.total_ns < y->s.total_ns ? 1 : -1;
	if (x->s.calls != y->s.calls)
		return x->s.calls < y->s.calls ? 1 : -1;
	c = strcmp(x->func, y->func);
	if (c)
		return c;
	/* Rows of one function in several groups: in a stable order. */
	if (x->group.pid != y->group.pid)
		return x->group.pid < y->group.pid ? -1 : 1;
	c = str_cmp(x->group.container, y->group.container);
	return c ? c : str_cmp(x->group.cgroup, y->group.cgroup);
}

uint64_t report_untimed_calls(const struct report_row *rows, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		const struct func_summary *s = &rows[i].s;

		if (rows[i].entry_only == ENTRY_ONLY_NO && s->calls > s->returns + s->unmatched + s->unwound)
			sum += s->calls - s->returns - s->unmatched - s->unwound;
	}
	return sum;
}

void report_sort(struct report_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
}

void report_format_ns(char *buf, size_t sz, uint64_t ns)
{
	static const struct { uint64_t div; const char *unit; } units[] = {
		{ 1000000000ull, "s" }, { 1000000ull, "ms" }, { 1000ull, "us" },
	};

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (ns >= units[i].div) {
			double v = (double)ns / (double)units[i].div;

			snprintf(buf, sz, v >= 100 ? "%.0f%s" : v >= 10 ? "%.1f%s" : "%.2f%s", v, units[i].unit);
			return;
		}
	}
	snprintf(buf, sz, "%" PRIu64 "ns", ns);
}

void report_trust(struct latency_trust *t, const struct report_row *r, const struct report_info *info)
{
	struct comp_calib c;

	memcpy(c.pair_ns, info->probe_pair_ns, sizeof(c.pair_ns));
	memcpy(c.pair_least_ns, info->probe_pair_least_ns, sizeof(c.pair_least_ns));
	memcpy(c.own_ns, info->probe_own_ns, sizeof(c.own_ns));
	memcpy(c.own_spread_ns, info->probe_own_spread_ns, sizeof(c.own_spread_ns));
	/* A single-stepped function's times are raw: nothing was taken off to doubt. */
	latency_trust_of(t, &r->s, &c, info->compensated && !r->stepped);
}

void report_format_call_ns(char *buf, size_t sz, uint64_t ns, const struct latency_trust *t)
{
	if (!latency_bounded(t, ns)) {
		report_format_ns(buf, sz, ns);
		return;
	}
	/*
	 * Within the bound of a call's probes' cost: a time that far off
	 * either way, so the call took less than the time plus the bound, how
	 * much less is not known (the bound alone would claim too little).
	 */
	buf[0] = '<';
	report_format_ns(buf + 1, sz - 1, ns + t->bound_ns);
}

bool report_bound_note(char *buf, size_t sz, const struct report_info *info)
{
	char spread[24];

	if (!info->compensated)
		return false;
	report_format_ns(spread, sizeof(spread), info->probe_own_spread_ns[DLPROF_PROBE_EMULATED]);
	snprintf(buf, sz, "<N: within what the probes' cost can be off by (%s for a call's own, more with probed "
		 "calls inside): the calls take less than N, the time plus that, how much less is not known", spread);
	return true;
}

bool report_uncertain_note(char *buf, size_t sz, int uncertain)
{
	if (!uncertain)
		return false;
	snprintf(buf, sz, "? %d function%s mostly %s nested calls' probes: their cost beyond the least taken off "
		 "may be more than a quarter of what is shown; profile fewer functions (--func, --exclude), or only "
		 "those the program imports (--boundary), to time %s",
		 uncertain, uncertain == 1 ? "'s time is" : "s' times are", uncertain == 1 ? "its" : "their",
		 uncertain == 1 ? "it" : "them");
	return true;
}

bool report_row_raw(const struct report_row *r, const struct report_info *info)
{
	return r->stepped && r->s.returns && info->compensated;
}

bool report_raw_note(char *buf, size_t sz, int stepped)
{
	if (!stepped)
		return false;
	snprintf(buf, sz, "~ %d function%s timed raw: %s probes are single-stepped, whose cost varies call to call "
		 "by more than a short call takes", stepped, stepped == 1 ? "" : "s", stepped == 1 ? "its" : "their");
	return true;
}

void report_format_count(char *buf, size_t sz, double v)
{
	if (v >= 1e9)
		snprintf(buf, sz, "%.2fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, sz, "%.2fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, sz, "%.0f", v);
	else if (v >= 100)
		snprintf(buf, sz, "%.1f", v);
	else
		snprintf(buf, sz, "%.2f", v);
}

static int event_index(const struct report_info *info, const char *name)
{
	for (size_t k = 0; k < info->nr_events; k++)
		if (!strcmp(info->events[k], name))
			return (int)k;
	return -1;
}

/* Names longer than this are shortened in the middle unless --wide. */
#define NAME_COLS_MAX	48
#define ELLIPSIS	"\u2026"	/* one column on the terminal, three bytes */

/*
 * How the table shortens the names longer than width: name i keeps its
 * first heads[i] bytes and its last width - 1 - heads[i], an ellipsis
 * between. Each head is chosen so that what a name keeps shows where it
 * differs from every other shortened name: two rows never print the same.
 */
struct name_cut {
	int width;
	int *heads;	/* per row; NULL: every name whole */
};

static bool cut_row(const struct report_row *r)
{
	return r->s.calls && strlen(r->func) > NAME_COLS_MAX;
}

static size_t common_prefix(const char *a, const char *b)
{
	size_t n = 0;

	while (a[n] && a[n] == b[n])
		n++;
	return n;
}

static size_t common_suffix(const char *a, size_t la, const char *b, size_t lb)
{
	size_t n = 0;

	while (n < la && n < lb && a[la - 1 - n] == b[lb - 1 - n])
		n++;
	return n;
}

/* Row i's common prefix and suffix with each other name that may be cut; returns how many. */
static size_t overlaps(const struct report_row *rows, size_t n, size_t i, size_t (*pq)[2])
{
	size_t li = strlen(rows[i].func), m = 0;

	for (size_t j = 0; j < n; j++) {
		if (j == i || !cut_row(&rows[j]) || !strcmp(rows[i].func, rows[j].func))
			continue;
		pq[m][0] = common_prefix(rows[i].func, rows[j].func);
		pq[m][1] = common_suffix(rows[i].func, li, rows[j].func, strlen(rows[j].func));
		m++;
	}
	return m;
}

/* Does a head h in width w keep a byte where the name differs from each of the others? */
static bool head_tells_apart(const size_t (*pq)[2], size_t m, int w, int h)
{
	for (size_t k = 0; k < m; k++)
		if ((long)w - 1 - (long)pq[k][1] <= h && (size_t)h <= pq[k][0])
			return false;
	return true;
}

/* The head nearest a third of w (the tail keeps the function's own name and parameters); -1: none. */
static int choose_head(const size_t (*pq)[2], size_t m, int w)
{
	int pref = (w - 1) / 3;

	for (int d = 0; d < 2 * w; d++) {
		int h = d & 1 ? pref + (d + 1) / 2 : pref - d / 2;

		if (h >= 1 && h <= w - 2 && head_tells_apart(pq, m, w, h))
			return h;
	}
	return -1;
}

/*
 * The narrowest width from NAME_COLS_MAX up at which every long name has
 * a head that tells it apart (a wider column only keeps more of each
 * name), then each name's head. On out of memory, names are printed whole.
 */
static struct name_cut choose_cut(const struct report_row *rows, size_t n, int longest)
{
	struct name_cut cut = { .width = NAME_COLS_MAX };
	size_t (*pq)[2];

	if (longest <= NAME_COLS_MAX)
		return (struct name_cut){ .width = longest };
	pq = calloc(n, sizeof(*pq));
	cut.heads = calloc(n, sizeof(*cut.heads));
	if (!pq || !cut.heads) {
		free(pq);
		free(cut.heads);
		return (struct name_cut){ .width = longest };
	}
	for (size_t i = 0; i < n; i++) {
		size_t m = cut_row(&rows[i]) ? overlaps(rows, n, i, pq) : 0;

		while (m && cut.width < longest && choose_head(pq, m, cut.width) < 0)
			cut.width++;
	}
	for (size_t i = 0; i < n; i++) {
		size_t m = cut_row(&rows[i]) ? overlaps(rows, n, i, pq) : 0;

		cut.heads[i] = choose_head(pq, m, cut.width);
	}
	free(pq);
	return cut;
}

/* Row i's name in cut.width columns, shortened in the middle when longer. */
static void print_name(FILE *out, const struct report_row *rows, size_t i, struct name_cut cut)
{
	const char *name = rows[i].func;
	int len = (int)strlen(name), head = cut.heads ? cut.heads[i] : -1;

	if (len <= cut.width || head < 0) {
		fprintf(out, "%-*s", cut.width, name);
		return;
	}
	fprintf(out, "%.*s" ELLIPSIS "%s", head, name, name + len - (cut.width - 1 - head));
}

/* A cgroup path in the table: shortened in the middle past this, unless --wide. */
#define CGROUP_COLS_MAX	40

/* The group columns' widths (0: the column is not shown). */
struct group_cols {
	int comm, container, cgroup, caller, module;
};

static int cgroup_width(const char *path, bool wide)
{
	int len = path ? (int)strlen(path) : 1;

	return !wide && len > CGROUP_COLS_MAX ? CGROUP_COLS_MAX : len;
}

static struct group_cols group_widths(const struct report_row *rows, size_t n, const struct report_info *info)
{
	struct group_cols w = { 0 };

	if (info->by == ATTR_BY_PROCESS)
		w.comm = 15;	/* TASK_COMM_LEN - 1 */
	if (info->by == ATTR_BY_CONTAINER || info->by == ATTR_BY_CGROUP) {
		w.container = 9;
		w.cgroup = 6;
	}
	if (info->by == ATTR_BY_CALLER) {
		w.caller = 6;
		w.module = 13;
	}
	for (size_t i = 0; i < n && w.caller; i++) {
		const struct attr_group *g = &rows[i].group;
		int c = g->caller ? (int)strlen(g->caller) : 1, m = g->caller_module ? (int)strlen(g->caller_module) : 1;

		if (!rows[i].s.calls)
			continue;
		w.caller = c > w.caller ? c : w.caller;
		w.module = m > w.module ? m : w.module;
	}
	for (size_t i = 0; i < n && w.container; i++) {
		const struct attr_group *g = &rows[i].group;
		int c = g->container ? (int)strlen(g->container) : 1, p = cgroup_width(g->cgroup, info->wide);

		if (!rows[i].s.calls)
			continue;
		w.container = c > w.container ? c : w.container;
		w.cgroup = p > w.cgroup ? p : w.cgroup;
	}
	return w;
}

static void print_group_head(FILE *out, const struct report_info *info, struct group_cols w)
{
	if (info->by == ATTR_BY_PROCESS)
		fprintf(out, "%7s %-*s ", "PID", w.comm, "COMM");
	else if (w.container)
		fprintf(out, "%-*s %-*s ", w.container, "CONTAINER", w.cgroup, "CGROUP");
	else if (w.caller)
		fprintf(out, "%-*s %-*s ", w.caller, "CALLER", w.module, "CALLER_MODULE");
}

/* A row's group: "-" for what is unknown or not there (the host has no container). */
static void print_group(FILE *out, const struct attr_group *g, const struct report_info *info,
			struct group_cols w)
{
	const char *cg = g->cgroup ? g->cgroup : "-";
	int len = (int)strlen(cg), head;

	if (info->by == ATTR_BY_PROCESS && !g->pid) {
		/* A nested caller,process table's function and rest rows: many processes. */
		fprintf(out, "%7s %-*s ", "-", w.comm, "-");
		return;
	}
	if (info->by == ATTR_BY_PROCESS) {
		fprintf(out, "%7u %-*s ", g->pid, w.comm, g->comm && *g->comm ? g->comm : "-");
		return;
	}
	if (w.caller) {
		fprintf(out, "%-*s %-*s ", w.caller, g->caller ? g->caller : "-", w.module,
			g->caller_module ? g->caller_module : "-");
		return;
	}
	if (!w.container)
		return;
	fprintf(out, "%-*s ", w.container, g->container ? g->container : "-");
	if (len <= w.cgroup) {
		fprintf(out, "%-*s ", w.cgroup, cg);
		return;
	}
	/* The head keeps the slice, the tail the container's or service's own name. */
	head = w.cgroup / 3;
	fprintf(out, "%.*s" ELLIPSIS "%s ", head, cg, cg + len - (w.cgroup - 1 - head));
}

/* Which times the table shows: compensated, or raw (a trace's, a failed calibration). */
bool report_latency_note(char *buf, size_t sz, const struct report_info *info)
{
	char e[24], s[24];

	if (info->compensated) {
		report_format_ns(e, sizeof(e), info->probe_pair_least_ns[DLPROF_PROBE_EMULATED]);
		report_format_ns(s, sizeof(s), info->probe_pair_least_ns[DLPROF_PROBE_STEPPED]);
		snprintf(buf, sz, "times are compensated: less what their own probes cost (the median) and the least "
			 "cost of each probed call inside, calibrated at start (a probe pair at least %s emulated, %s "
			 "single-stepped); --raw-latency shows them as measured", e, s);
		return true;
	}
	if (info->compensation_err) {
		snprintf(buf, sz, "times are raw, the probes' own cost included: calibrating it failed (%s)",
			 strerror(-info->compensation_err));
		return true;
	}
	if (info->from_trace) {
		snprintf(buf, sz, "times are raw, the probes' own cost included: a trace keeps each call as "
			 "measured, inside its caller (record's own summary subtracts the probes' cost)");
		return true;
	}
	return false;
}

static void print_copies(FILE *out, const struct report_info *info)
{
	for (size_t i = 0; i < info->nr_copies; i++) {
		const struct report_copy *c = &info->copies[i];

		fprintf(out, "# copy %s", c->path);
		if (c->ns_pid)
			fprintf(out, " in pid %d's mount namespace", c->ns_pid);
		fprintf(out, " (dev %u:%u inode %" PRIu64 "): %s, %zu functions", c->dev_major, c->dev_minor, c->ino,
			c->origin, c->functions);
		if (c->attach_s > 0)
			fprintf(out, ", attached at %.3f s", c->attach_s);
		if (c->discovery_ms > 0)
			fprintf(out, " (%.1f ms after its first mapping)", c->discovery_ms);
		if (c->detached)
			fprintf(out, ", detached at %.3f s", c->detach_s);
		if (c->idle)
			fprintf(out, ", idle (attached, no process maps it now)");
		if (c->attach_failures)
			fprintf(out, ", %zu attach%s failed: its calls then uncounted", c->attach_failures,
				c->attach_failures == 1 ? "" : "es");
		fputc('\n', out);
	}
}

static void print_table(FILE *out, const struct report_row *rows, size_t n, const struct report_info *shown_info,
			const struct report_info *info);

void report_print_table(FILE *out, const struct report_row *rows, size_t n,
			const struct report_info *info)
{
	struct caller_nest nest = { 0 };
	/* By caller, each function's callers under it; flat should memory run out. */
	bool nested = attr_by_has_caller(info->by) && !caller_nest_build(rows, n, info->callers_top, &nest);
	struct report_info flat_info;

	if (nested) {
		/* The callers are in the name and library columns; by caller,process, PID and COMM before them. */
		flat_info = *info;
		flat_info.by = info->by == ATTR_BY_CALLER_PROCESS ? ATTR_BY_PROCESS : ATTR_BY_FUNCTION;
		print_table(out, nest.rows, nest.n, &flat_info, info);
		caller_nest_free(&nest);
		return;
	}
	print_table(out, rows, n, info, info);
}

/*
 * The table of rows as shown: laid out as shown->by says (a nested caller
 * table shows as one per function), its footer saying what info->by was.
 */
static void print_table(FILE *out, const struct report_row *rows, size_t n, const struct report_info *shown_info,
			const struct report_info *info)
{
	struct group_cols gw = group_widths(rows, n, shown_info);
	int fw = 8, lw = 7, shown = 0, unmatched = 0, unwound = 0, scaled = 0, entry_only[NR_WHYS] = { 0 };
	int stepped = 0, uncertain = 0;
	bool bounded = false;
	int cyc = event_index(info, "cycles"), ins = event_index(info, "instructions");
	bool ipc = cyc >= 0 && ins >= 0;
	struct name_cut cut;
	char t[6][24], note[512];

	for (size_t i = 0; i < n; i++) {
		/* Per function, as the start-up note counts them, called or not. */
		if (info->by == ATTR_BY_FUNCTION)
			entry_only[rows[i].entry_only]++;
		if (!rows[i].s.calls)
			continue;
		if ((int)strlen(rows[i].func) > fw)
			fw = (int)strlen(rows[i].func);
		if ((int)strlen(path_base(rows[i].lib)) > lw)
			lw = (int)strlen(path_base(rows[i].lib));
		unmatched |= rows[i].s.unmatched != 0;
		unwound |= rows[i].s.unwound != 0;
		if (info->by != ATTR_BY_FUNCTION && rows[i].caller_level < 2)
			entry_only[rows[i].entry_only]++;
		scaled |= rows[i].s.scaled != 0;
		stepped += rows[i].stepped && rows[i].s.returns && info->compensated && rows[i].caller_level < 2;
	}
	cut = info->wide ? (struct name_cut){ .width = fw } : choose_cut(rows, n, fw);
	fw = cut.width;
	print_group_head(out, shown_info, gw);
	fprintf(out, "%-*s %-*s %10s %9s %9s %9s %9s %9s %9s", fw, "FUNCTION", lw, "LIBRARY",
		"CALLS", "TOTAL", "AVG", "P50", "P99", "MAX", "ONCPU");
	for (size_t k = 0; k < info->nr_events; k++)
		fprintf(out, " %*s", (int)(strlen(info->events[k]) > 9 ? strlen(info->events[k]) : 9),
			info->events[k]);
	if (ipc)
		fprintf(out, " %6s", "IPC");
	fprintf(out, "%s%s\n", unmatched ? "  UNMATCHED" : "", unwound ? "    UNWOUND" : "");
	for (size_t i = 0; i < n; i++) {
		const struct func_summary *s = &rows[i].s;
		struct latency_trust tr;

		if (!s->calls)
			continue;
		shown++;
		report_trust(&tr, &rows[i], info);
		report_format_ns(t[0], sizeof(t[0]), s->total_ns);
		report_format_call_ns(t[1], sizeof(t[1]), s->avg_ns, &tr);
		report_format_call_ns(t[2], sizeof(t[2]), s->p50_ns, &tr);
		report_format_call_ns(t[3], sizeof(t[3]), s->p99_ns, &tr);
		report_format_call_ns(t[4], sizeof(t[4]), s->max_ns, &tr);
		report_format_call_ns(t[5], sizeof(t[5]), s->returns ? s->oncpu_ns / s->returns : 0, &tr);
		bounded |= latency_bounded(&tr, s->p50_ns) || latency_bounded(&tr, s->avg_ns) ||
			   latency_bounded(&tr, s->returns ? s->oncpu_ns / s->returns : 0);
		uncertain += tr.uncertain;
		/* Never a 0 for a time nobody measured. */
		for (int k = rows[i].entry_only != ENTRY_ONLY_NO ? 0 : 1; k < 6 && !s->returns; k++)
			strcpy(t[k], "-");
		for (int k = 0; k < 6 && rows[i].stepped && s->returns && info->compensated; k++)
			strcat(t[k], "~");
		for (int k = 0; k < 6 && tr.uncertain; k++)
			strcat(t[k], "?");
		/* A sum of callers some of which have no histogram: no percentiles. */
		if ((rows[i].caller_level & 1) && !rows[i].hist)
			strcpy(t[2], "-"), strcpy(t[3], "-");
		print_group(out, &rows[i].group, shown_info, gw);
		print_name(out, rows, i, cut);
		fprintf(out, " %-*s %10" PRIu64 " %9s %9s %9s %9s %9s %9s",
			lw, path_base(rows[i].lib), s->calls, t[0], t[1], t[2], t[3], t[4], t[5]);
		for (size_t k = 0; k < info->nr_events; k++) {
			char v[24] = "-";
			int w = (int)(strlen(info->events[k]) > 9 ? strlen(info->events[k]) : 9);

			if (s->returns)
				report_format_count(v, sizeof(v) - 1, (double)s->counters[k] / (double)s->returns);
			if (s->scaled)
				strcat(v, "*");
			fprintf(out, " %*s", w, v);
		}
		if (ipc) {
			if (s->counters[cyc])
				fprintf(out, " %6.2f", (double)s->counters[ins] / (double)s->counters[cyc]);
			else
				fprintf(out, " %6s", "-");
		}
		if (unmatched)
			fprintf(out, "  %9" PRIu64, s->unmatched);
		if (unwound)
			fprintf(out, "  %9" PRIu64, s->unwound);
		fputc('\n', out);
	}
	free(cut.heads);
	if (!shown)
		fprintf(out, "(no calls)\n");
	if (info->nr_events)
		fprintf(out, "# ONCPU and the events are per timed call%s\n",
			scaled ? "; * multiplexed counters, extrapolated from the time they ran" : "");
	if (report_raw_note(note, sizeof(note), stepped))
		fprintf(out, "# %s\n", note);
	if (bounded && report_bound_note(note, sizeof(note), info))
		fprintf(out, "# %s\n", note);
	if (report_uncertain_note(note, sizeof(note), uncertain))
		fprintf(out, "# %s\n", note);
	for (size_t w = ENTRY_ONLY_NO + 1; w < NR_WHYS; w++)
		if (entry_only[w])
			fprintf(out, "# %d function%s counted at entry only, never timed: %s\n", entry_only[w],
				entry_only[w] == 1 ? "" : "s", entry_only_whys[w].footer);
	fprintf(out, "# %zu function%s attached (%s) in %.1f ms", info->functions_attached,
		info->functions_attached == 1 ? "" : "s", info->attach_mode, info->attach_ms);
	if (info->functions_moved)
		fprintf(out, ", %zu probed a few bytes past their entry, where a probe costs less", info->functions_moved);
	if (info->functions_skipped)
		fprintf(out, ", %zu could not be probed", info->functions_skipped);
	if (info->detach_unfinished)
		fprintf(out, ", detach still unfinished after %.1f ms", info->detach_ms);
	else if (info->detach_ms)
		fprintf(out, ", detached in %.1f ms", info->detach_ms);
	fprintf(out, "; %.1f s profiled", info->elapsed_s);
	if (info->drops)
		fprintf(out, "; %" PRIu64 " records dropped", info->drops);
	if (info->incomplete)
		fprintf(out, "; %" PRIu64 " calls counted but not timed (kernel memory)", info->incomplete);
	if (info->in_flight)
		fprintf(out, "; %" PRIu64 " calls still running when the probes were removed (counted, not timed)",
			info->in_flight);
	fputc('\n', out);
	if (info->counter_read_failed)
		fprintf(out, "# %" PRIu64 " perf counter reads failed: the calls they belong to show counters short by "
			"what those reads missed\n", info->counter_read_failed);
	if (report_latency_note(note, sizeof(note), info))
		fprintf(out, "# %s\n", note);
	if (overhead_note(note, sizeof(note), &info->overhead, info->probe_pair_ns, info->elapsed_s))
		fprintf(out, "# %s\n", note);
	if (info->by == ATTR_BY_CALLER_PROCESS)
		fprintf(out, "# one row per function, caller and process, keyed in the kernel\n");
	else if (info->by != ATTR_BY_FUNCTION)
		fprintf(out, "# one row per function and %s, keyed in the kernel%s\n", attr_by_name(info->by),
			info->by == ATTR_BY_CONTAINER ? "; CONTAINER - is the host" : "");
	if (shown_info != info && info->callers_top)
		fprintf(out, "# under each function its callers%s, their module in LIBRARY: the top %zu by time, the "
			"rest summed (--callers)\n", info->by == ATTR_BY_CALLER_PROCESS ? " in each process" : "",
			info->callers_top);
	else if (shown_info != info)
		fprintf(out, "# under each function its callers%s, their module in LIBRARY\n",
			info->by == ATTR_BY_CALLER_PROCESS ? " in each process" : "");
	if (info->group_overflow)
		fprintf(out, "# %" PRIu64 " calls in no %s: the kernel's table of groups was full (%d entries); "
			"the rows above leave them out, --by function counts them\n", info->group_overflow,
			attr_by_name(info->by), DLPROF_MAX_GROUPS);
	if (info->proc_meta_full)
		fprintf(out, "# %" PRIu64 " processes unnamed: the kernel's table of processes was full (%d entries)\n",
			info->proc_meta_full, DLPROF_MAX_PROCS);
	if (info->discovery_lost)
		fprintf(out, "# %" PRIu64 " copy discovery events lost, the kernel's buffer full: a copy first mapped "
			"then is found at its next mapping, one whose last process exited then stays attached\n",
			info->discovery_lost);
	if (info->threads_unnamed)
		fprintf(out, "# %" PRIu64 " thread names not kept: the kernel's table of threads was full (%d entries); "
			"those threads show their process's name\n", info->threads_unnamed, DLPROF_MAX_THREADS);
	print_copies(out, info);
}

static int add_u64(struct json_object *o, const char *key, uint64_t v)
{
	struct json_object *n = json_object_new_uint64(v);

	return n ? json_object_object_add(o, key, n) : -ENOMEM;
}

static struct json_object *copy_json(const struct report_copy *c)
{
	struct json_object *o = json_object_new_object();
	char dev[32];
	int err = 0;

	if (!o)
		return NULL;
	snprintf(dev, sizeof(dev), "%u:%u", c->dev_major, c->dev_minor);
	err |= json_object_object_add(o, "path", json_object_new_string(c->path));
	err |= add_u64(o, "namespace_pid", (uint64_t)c->ns_pid);
	err |= json_object_object_add(o, "dev", json_object_new_string(dev));
	err |= add_u64(o, "inode", c->ino);
	err |= json_object_object_add(o, "origin", json_object_new_string(c->origin));
	err |= add_u64(o, "functions", c->functions);
	err |= json_object_object_add(o, "attach_s", json_object_new_double(c->attach_s));
	err |= json_object_object_add(o, "detached", json_object_new_boolean(c->detached));
	err |= json_object_object_add(o, "idle", json_object_new_boolean(c->idle));
	err |= add_u64(o, "attach_failures", c->attach_failures);
	if (c->detached)
		err |= json_object_object_add(o, "detach_s", json_object_new_double(c->detach_s));
	if (c->discovery_ms > 0)
		err |= json_object_object_add(o, "discovery_ms", json_object_new_double(c->discovery_ms));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int add_copies(struct json_object *doc, const struct report_info *info)
{
	struct json_object *arr;
	uint64_t idle = 0;
	int err;

	if (!info->nr_copies)
		return 0;
	arr = json_object_new_array();
	if (!arr)
		return -ENOMEM;
	err = json_object_object_add(doc, "copies", arr);
	for (size_t i = 0; i < info->nr_copies && !err; i++) {
		struct json_object *c = copy_json(&info->copies[i]);

		idle += info->copies[i].idle;
		err = c ? json_object_array_add(arr, c) : -ENOMEM;
	}
	return err ?: add_u64(doc, "idle_copies", idle);
}

static int add_events(struct json_object *doc, const struct report_info *info)
{
	struct json_object *evs = json_object_new_array();
	int err;

	if (!evs)
		return -ENOMEM;
	err = json_object_object_add(doc, "events", evs);
	for (size_t k = 0; k < info->nr_events && !err; k++)
		err = json_object_array_add(evs, json_object_new_string(info->events[k]));
	return err;
}

static struct json_object *str_or_null(const char *s)
{
	return s ? json_object_new_string(s) : NULL;
}

/* The row's group keys (docs/json-output.md): only those of info's --by. */
static int add_group(struct json_object *o, const struct attr_group *g, enum attr_by by)
{
	int err = 0;

	switch (by) {
	case ATTR_BY_FUNCTION:
		break;
	case ATTR_BY_PROCESS:
		err |= add_u64(o, "pid", g->pid);
		err |= json_object_object_add(o, "comm", str_or_null(g->comm));
		err |= add_u64(o, "cgroup_id", g->cgroup_id);
		break;
	case ATTR_BY_CGROUP:
		err |= add_u64(o, "cgroup_id", g->cgroup_id);
		/* fall through */
	case ATTR_BY_CONTAINER:
		err |= json_object_object_add(o, "cgroup", str_or_null(g->cgroup));
		err |= json_object_object_add(o, "container_id", str_or_null(g->container_id));
		err |= json_object_object_add(o, "container", str_or_null(g->container));
		break;
	case ATTR_BY_CALLER_PROCESS:
		/* A function's unattributed calls are no one process's: pid 0, comm null. */
		err |= add_u64(o, "pid", g->pid);
		err |= json_object_object_add(o, "comm", str_or_null(g->comm));
		/* fall through */
	case ATTR_BY_CALLER:
		err |= json_object_object_add(o, "caller", str_or_null(g->caller));
		err |= json_object_object_add(o, "caller_module", str_or_null(g->caller_module));
		break;
	}
	return err;
}

int report_latency_json(struct json_object *doc, const struct report_info *info)
{
	struct json_object *costs;
	int err = 0;

	err |= json_object_object_add(doc, "latency", json_object_new_string(info->compensated ? "compensated" : "raw"));
	if (info->compensation_err)
		err |= json_object_object_add(doc, "compensation_error",
					      json_object_new_string(strerror(-info->compensation_err)));
	if (!info->compensated)
		return err;
	costs = json_object_new_object();
	if (!costs)
		return -ENOMEM;
	err |= json_object_object_add(doc, "probe_cost_ns", costs);
	for (int k = 0; k < DLPROF_PROBE_CLASSES; k++) {
		struct json_object *c = json_object_new_object();

		if (!c)
			return -ENOMEM;
		err |= json_object_object_add(costs, probe_class_name((enum dlprof_probe_class)k), c);
		err |= add_u64(c, "pair", info->probe_pair_ns[k]);
		err |= add_u64(c, "own", info->probe_own_ns[k]);
		err |= add_u64(c, "own_spread", info->probe_own_spread_ns[k]);
		err |= add_u64(c, "pair_least", info->probe_pair_least_ns[k]);
	}
	return err;
}

/*
 * How far a compensated row's times can be believed (docs/json-output.md):
 * the bound, the per-call times below it, and its nested calls' probes.
 */
static int add_trust(struct json_object *o, const struct func_summary *s, const struct latency_trust *t)
{
	const struct { const char *key; uint64_t ns; } per_call[] = {
		{ "avg_ns", s->avg_ns }, { "min_ns", s->min_ns }, { "max_ns", s->max_ns },
		{ "p50_ns", s->p50_ns }, { "p90_ns", s->p90_ns }, { "p99_ns", s->p99_ns },
	};
	struct json_object *bounded = json_object_new_array();
	int err = 0;

	if (!bounded)
		return -ENOMEM;
	err |= json_object_object_add(o, "bounded", bounded);
	for (size_t i = 0; i < sizeof(per_call) / sizeof(per_call[0]); i++)
		if (s->returns && latency_bounded(t, per_call[i].ns))
			err |= json_object_array_add(bounded, json_object_new_string(per_call[i].key));
	err |= add_u64(o, "bound_ns", t->bound_ns);
	err |= add_u64(o, "children_probe_ns", t->children_ns);
	err |= add_u64(o, "children_probe_spread_ns", t->children_spread_ns);
	err |= json_object_object_add(o, "children_probe_share", json_object_new_double(t->children_share));
	return err;
}

static struct json_object *row_json(const struct report_row *r, const struct report_info *info)
{
	struct json_object *o = json_object_new_object(), *ctr = json_object_new_object();
	const struct func_summary *s = &r->s;
	struct latency_trust tr;
	int err = 0;

	if (!o || !ctr) {
		json_object_put(o);
		json_object_put(ctr);
		return NULL;
	}
	err |= json_object_object_add(o, "counters", ctr);
	for (size_t k = 0; k < info->nr_events; k++)
		err |= add_u64(ctr, info->events[k], s->counters[k]);
	err |= json_object_object_add(o, "lib", json_object_new_string(r->lib));
	err |= json_object_object_add(o, "name", json_object_new_string(r->func));
	if (r->mangled && strcmp(r->mangled, r->func))
		err |= json_object_object_add(o, "mangled", json_object_new_string(r->mangled));
	err |= add_u64(o, "calls", s->calls);
	err |= json_object_object_add(o, "entry_only", json_object_new_boolean(r->entry_only != ENTRY_ONLY_NO));
	/*
	 * Its times are raw where the others are compensated, or rest mostly
	 * on what its nested calls' probes are estimated to cost
	 * (docs/latency-compensation.md).
	 */
	report_trust(&tr, r, info);
	if (r->stepped && info->compensated)
		err |= json_object_object_add(o, "latency", json_object_new_string("raw"));
	else if (tr.uncertain)
		err |= json_object_object_add(o, "latency", json_object_new_string("uncertain"));
	if (info->compensated && !r->stepped)
		err |= add_trust(o, s, &tr);
	if (r->entry_only != ENTRY_ONLY_NO && (size_t)r->entry_only < NR_WHYS)
		err |= json_object_object_add(o, "entry_only_reason",
					      json_object_new_string(entry_only_why_name(r->entry_only)));
	err |= add_u64(o, "total_ns", s->total_ns);
	err |= add_u64(o, "avg_ns", s->avg_ns);
	err |= add_u64(o, "min_ns", s->min_ns);
	err |= add_u64(o, "max_ns", s->max_ns);
	err |= add_u64(o, "p50_ns", s->p50_ns);
	err |= add_u64(o, "p90_ns", s->p90_ns);
	err |= add_u64(o, "p99_ns", s->p99_ns);
	err |= add_u64(o, "unmatched", s->unmatched);
	err |= add_u64(o, "unwound", s->unwound);
	err |= add_u64(o, "timed", s->returns);
	err |= add_u64(o, "oncpu_ns", s->oncpu_ns);
	err |= add_u64(o, "scaled_calls", s->scaled);
	err |= add_group(o, &r->group, info->by);
	/* Both: compensated above when the document says so, as measured here. */
	err |= add_u64(o, "raw_total_ns", info->compensated ? s->raw_total_ns : s->total_ns);
	err |= add_u64(o, "raw_avg_ns", info->compensated ? s->raw_avg_ns : s->avg_ns);
	err |= add_u64(o, "raw_oncpu_ns", info->compensated ? s->raw_oncpu_ns : s->oncpu_ns);
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int report_print_json(FILE *out, const struct report_row *rows, size_t n,
		      const struct report_info *info)
{
	struct json_object *doc = json_object_new_object(), *funcs = json_object_new_array();
	int err = 0;

	if (!doc || !funcs) {
		json_object_put(doc);
		json_object_put(funcs);
		return -ENOMEM;
	}
	/* Owned by doc from here on, whatever fails later. */
	err |= json_object_object_add(doc, "functions", funcs);
	err |= json_object_object_add(doc, "attach_ms", json_object_new_double(info->attach_ms));
	err |= json_object_object_add(doc, "attach_mode", json_object_new_string(info->attach_mode));
	err |= json_object_object_add(doc, "detach_ms", json_object_new_double(info->detach_ms));
	err |= json_object_object_add(doc, "detach_finished", json_object_new_boolean(!info->detach_unfinished));
	err |= json_object_object_add(doc, "unwind_repair", json_object_new_boolean(info->unwind_repair));
	err |= add_u64(doc, "unwind_slots", info->unwind_slots);
	err |= add_u64(doc, "profiler_max_rss_kib", info->max_rss_kib);
	err |= add_u64(doc, "probe_run_ns", info->probe_run_ns);
	err |= add_u64(doc, "probe_runs", info->probe_runs);
	err |= add_u64(doc, "functions_attached", info->functions_attached);
	err |= add_u64(doc, "functions_skipped", info->functions_skipped);
	err |= add_u64(doc, "functions_moved", info->functions_moved);
	err |= add_u64(doc, "drops", info->drops);
	err |= add_u64(doc, "orphan_returns", info->orphan_returns);
	err |= add_u64(doc, "untimed_calls", info->incomplete);
	err |= add_u64(doc, "in_flight_calls", info->in_flight);
	err |= add_u64(doc, "counter_read_failed", info->counter_read_failed);
	err |= add_u64(doc, "oncpu_resynced_calls", info->oncpu_resynced);
	err |= json_object_object_add(doc, "by", json_object_new_string(attr_by_name(info->by) ?: "function"));
	err |= add_u64(doc, "group_overflow", info->group_overflow);
	err |= add_u64(doc, "unnamed_processes", info->proc_meta_full);
	err |= add_u64(doc, "unnamed_threads", info->threads_unnamed);
	err |= add_u64(doc, "discovery_lost", info->discovery_lost);
	err |= report_latency_json(doc, info);
	err |= overhead_json(doc, &info->overhead, info->probe_pair_ns, info->elapsed_s);
	err |= json_object_object_add(doc, "elapsed_s", json_object_new_double(info->elapsed_s));
	err |= add_events(doc, info);
	err |= add_copies(doc, info);
	for (size_t i = 0; i < n && !err; i++) {
		struct json_object *r;

		if (!rows[i].s.calls)
			continue;
		r = row_json(&rows[i], info);
		err |= r ? json_object_array_add(funcs, r) : -ENOMEM;
	}
	if (!err) {
		fputs(json_object_to_json_string_ext(doc, (info->one_line ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_PRETTY) |
						     JSON_C_TO_STRING_NOSLASHESCAPE), out);
		fputc('\n', out);
	}
	json_object_put(doc);
	return err ? -ENOMEM : 0;
}
