// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd_top.h"
#include "cmd/live.h"
#include "cmd/term_screen.h"
#include "output/overhead_note.h"
#include "output/report.h"
#include "util/messages.h"

/* FUNCTION's narrowest width, and the width of each number column. */
#define NAME_MIN_COLS 16
#define NUM_COLS 10

/* The sort keys: one table for the keys, the header and the order. */
enum top_sort { SORT_CALLS, SORT_P99, SORT_ONCPU, SORT_NAME };

static const struct {
	char key;
	const char *what;
} sort_keys[] = {
	[SORT_CALLS] = { 'c', "calls/s" },
	[SORT_P99] = { 'p', "p99" },
	[SORT_ONCPU] = { 'o', "on-CPU %" },
	[SORT_NAME] = { 'n', "name" },
};

#define NR_SORT_KEYS (sizeof(sort_keys) / sizeof(sort_keys[0]))

/* The key that opens each function into its callers (--by caller), and how many it shows. */
#define CALLERS_KEY 'w'
#define CALLERS_SHOWN 3

struct top {
	struct term_screen screen;
	enum top_sort sort;
	/* The last tick, redrawn when the order changes. */
	struct interval_head head;
	const struct interval_func *funcs;
	size_t n;
	const struct report_info *info;
	size_t *order;		/* the called functions' indexes, sorted */
	size_t nr_order;
	bool callers_open;	/* each function's callers under it (--by caller) */
};

/* On-CPU time of the interval's timed calls, per mille of their wall time; -1: none timed. */
static long oncpu_permille(const struct func_delta *d)
{
	if (!d->returns || !d->total_ns)
		return -1;
	return (long)(d->oncpu_ns * 1000 / d->total_ns);
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0;
}

static int compare(const void *pa, const void *pb, void *ctx)
{
	const struct top *t = ctx;
	const struct interval_func *a = &t->funcs[*(const size_t *)pa], *b = &t->funcs[*(const size_t *)pb];
	int c = 0;

	switch (t->sort) {
	case SORT_CALLS: c = cmp_u64_desc(a->d.calls, b->d.calls); break;
	case SORT_P99: c = cmp_u64_desc(a->d.p99_ns, b->d.p99_ns); break;
	case SORT_ONCPU: {
		long x = oncpu_permille(&a->d), y = oncpu_permille(&b->d);

		c = x < y ? 1 : x > y ? -1 : 0;
		break;
	}
	case SORT_NAME: break;
	}
	if (!c && t->sort != SORT_NAME)
		c = cmp_u64_desc(a->row->s.calls, b->row->s.calls);
	return c ? c : strcmp(a->row->func, b->row->func);
}

static void sort_rows(struct top *t)
{
	t->nr_order = 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->funcs[i].row->s.calls)
			t->order[t->nr_order++] = i;
	qsort_r(t->order, t->nr_order, sizeof(*t->order), compare, t);
}

/* A line cut at the screen's width, the rest of the screen line cleared. */
static void put_line(FILE *out, int cols, const char *s)
{
	fprintf(out, "%.*s\033[K\r\n", cols, s);
}

/* A per-call time of the interval, bounded and marked as the row's trust says (as the summary's table). */
static void cell_ns(char *buf, size_t sz, const struct func_delta *d, uint64_t ns, const struct latency_trust *tr,
		    bool raw)
{
	if (!d->returns) {
		snprintf(buf, sz, "-");
		return;
	}
	report_format_call_ns(buf, sz - 2, ns, tr);
	if (raw)
		strcat(buf, "~");
	if (tr->uncertain)
		strcat(buf, "?");
}

/* A counter's column: as wide as its header, "EVENT/call". */
static int counter_cols(const char *event)
{
	int w = (int)strlen(event) + 5;

	return w > NUM_COLS ? w : NUM_COLS;
}

/* One function's line: the name first, where a narrow terminal keeps it; the interval's numbers, the total calls. */
static void format_row(char *line, size_t sz, const struct top *t, const struct interval_func *f, int name_cols)
{
	bool raw = report_row_raw(f->row, t->info);
	const struct func_delta *d = &f->d;
	double secs = t->head.interval_s > 0 ? t->head.interval_s : 1;
	long pm = oncpu_permille(d);
	char rate[24], p50[24], p99[24], oncpu[24], total[24], cell[24];
	struct latency_trust tr;
	size_t off;

	report_trust(&tr, f->row, t->info);
	report_format_count(rate, sizeof(rate), (double)d->calls / secs);
	cell_ns(p50, sizeof(p50), d, d->p50_ns, &tr, raw);
	cell_ns(p99, sizeof(p99), d, d->p99_ns, &tr, raw);
	if (pm < 0)
		snprintf(oncpu, sizeof(oncpu), "-");
	else
		snprintf(oncpu, sizeof(oncpu), "%ld.%ld%%", pm / 10, pm % 10);
	snprintf(total, sizeof(total), "%llu", (unsigned long long)f->row->s.calls);
	off = (size_t)snprintf(line, sz, "%-*.*s %*s %*s %*s %*s %*s", name_cols, name_cols, f->row->func, NUM_COLS,
			       rate, NUM_COLS, p50, NUM_COLS, p99, NUM_COLS, oncpu, NUM_COLS, total);
	for (size_t k = 0; k < t->info->nr_events && off < sz; k++) {
		if (d->returns)
			report_format_count(cell, sizeof(cell), (double)d->counters[k] / (double)d->returns);
		else
			snprintf(cell, sizeof(cell), "-");
		off += (size_t)snprintf(line + off, sz - off, " %*s", counter_cols(t->info->events[k]), cell);
	}
}

/* The caller rows of f (info->callers), the CALLERS_SHOWN that took the most time, into shown; how many. */
static size_t top_callers(const struct top *t, const struct interval_func *f, const struct report_row **shown)
{
	size_t n = 0;

	for (size_t i = 0; i < t->info->nr_callers; i++) {
		const struct report_row *c = &t->info->callers[i];
		size_t at;

		if (!c->s.calls || strcmp(c->func, f->row->func) || strcmp(c->lib, f->row->lib))
			continue;
		/* Insertion into the few kept, most time first; a full list drops its last. */
		at = n < CALLERS_SHOWN ? n : CALLERS_SHOWN - 1;
		if (n == CALLERS_SHOWN && shown[at]->s.total_ns >= c->s.total_ns)
			continue;
		for (; at > 0 && shown[at - 1]->s.total_ns < c->s.total_ns; at--)
			shown[at] = shown[at - 1];
		shown[at] = c;
		n += n < CALLERS_SHOWN;
	}
	return n;
}

/*
 * A caller's line under its function: "<- caller (module)", its percentiles,
 * on-CPU share and calls since the start (the kernel keeps no interval per
 * caller); no rate.
 */
static void format_caller(char *line, size_t sz, const struct report_row *c, int name_cols)
{
	const struct func_summary *s = &c->s;
	char name[256], p50[24] = "-", p99[24] = "-", oncpu[24] = "-", total[24];

	snprintf(name, sizeof(name), "  <- %s (%s)", c->group.caller ? c->group.caller : "-",
		 c->group.caller_module ? c->group.caller_module : "-");
	if (s->returns) {
		report_format_ns(p50, sizeof(p50), s->p50_ns);
		report_format_ns(p99, sizeof(p99), s->p99_ns);
	}
	if (s->returns && s->total_ns)
		snprintf(oncpu, sizeof(oncpu), "%.1f%%", 100.0 * (double)s->oncpu_ns / (double)s->total_ns);
	snprintf(total, sizeof(total), "%llu", (unsigned long long)s->calls);
	snprintf(line, sz, "%-*.*s %*s %*s %*s %*s %*s", name_cols, name_cols, name, NUM_COLS, "-", NUM_COLS, p50,
		 NUM_COLS, p99, NUM_COLS, oncpu, NUM_COLS, total);
}

/* The called functions whose times rest mostly on their nested calls' probes ("?"), or are raw ("~"). */
static int uncertain_rows(const struct top *t, int *raw)
{
	int n = 0;

	*raw = 0;
	for (size_t i = 0; i < t->nr_order; i++) {
		struct latency_trust tr;

		report_trust(&tr, t->funcs[t->order[i]].row, t->info);
		n += tr.uncertain;
		*raw += report_row_raw(t->funcs[t->order[i]].row, t->info);
	}
	return n;
}

/* FUNCTION as wide as the longest name shown, within what the numbers leave; never under NAME_MIN_COLS. */
static int name_width(const struct top *t, int cols, int numbers)
{
	int want = (int)strlen("FUNCTION"), room = cols - numbers - 1;

	for (size_t i = 0; i < t->nr_order; i++) {
		int len = (int)strlen(t->funcs[t->order[i]].row->func);

		want = len > want ? len : want;
	}
	/* Open callers: "  <- caller (module)". */
	for (size_t i = 0; t->callers_open && i < t->info->nr_callers; i++) {
		const struct attr_group *g = &t->info->callers[i].group;
		int len = 8 + (int)(strlen(g->caller ? g->caller : "-") + strlen(g->caller_module ? g->caller_module : "-"));

		want = len > want ? len : want;
	}
	if (want > room)
		want = room;
	return want > NAME_MIN_COLS ? want : NAME_MIN_COLS;
}

/*
 * Which times P50 and P99 are, and what the probes cost the targets so
 * far, as the summary says them; past the threshold, the warning too.
 * Returns the lines drawn.
 */
static int draw_notes(struct top *t, int cols)
{
	const struct report_info *info = t->info;
	char line[1024], note[768];
	int n = 1, raw, uncertain = uncertain_rows(t, &raw);

	if (!overhead_note(note, sizeof(note), &info->overhead, info->probe_pair_ns, info->elapsed_s))
		note[0] = '\0';
	snprintf(line, sizeof(line), "times %s%s%s", info->compensated ? "compensated (less the probes' own cost)"
				       : "raw (the probes' own cost included)", note[0] ? "; " : "", note);
	put_line(t->screen.out, cols, line);
	if (overhead_warning(note, sizeof(note), &info->overhead, info->elapsed_s, &info->remedy)) {
		snprintf(line, sizeof(line), "warning: %s", note);
		put_line(t->screen.out, cols, line);
		n++;
	}
	if (report_raw_note(note, sizeof(note), raw)) {
		put_line(t->screen.out, cols, note);
		n++;
	}
	if (report_uncertain_note(note, sizeof(note), uncertain)) {
		put_line(t->screen.out, cols, note);
		n++;
	}
	return n;
}

static void draw(struct top *t)
{
	FILE *out = t->screen.out;
	char line[1024], hdr[256];
	int rows, cols, name_cols, numbers, head_lines = 4;
	size_t off;

	if (!t->funcs)
		return;
	term_screen_size(&t->screen, &rows, &cols);
	fputs("\033[H", out);
	snprintf(line, sizeof(line), "dlprof-bpf top: %zu of %zu functions called; %.1f s profiled, last %.2f s; "
		 "sort: %s", t->nr_order, t->n, t->head.t_s, t->head.interval_s, sort_keys[t->sort].what);
	put_line(out, cols, line);
	head_lines += draw_notes(t, cols);
	if (t->info->by == ATTR_BY_CALLER)
		put_line(out, cols, t->callers_open ? "keys: c calls/s  p p99  o on-CPU %  n name  w close callers  q quit"
						    : "keys: c calls/s  p p99  o on-CPU %  n name  w open callers  q quit");
	else
		put_line(out, cols, "keys: c calls/s  p p99  o on-CPU %  n name  q quit");
	put_line(out, cols, "");
	numbers = 5 * (NUM_COLS + 1);
	for (size_t k = 0; k < t->info->nr_events; k++)
		numbers += counter_cols(t->info->events[k]) + 1;
	/* The numbers on the right go first on a narrow terminal (put_line cuts), the name stays. */
	name_cols = name_width(t, cols, numbers);
	off = (size_t)snprintf(line, sizeof(line), "%-*s %*s %*s %*s %*s %*s", name_cols, "FUNCTION", NUM_COLS,
			       "CALLS/s", NUM_COLS, "P50", NUM_COLS, "P99", NUM_COLS, "ONCPU", NUM_COLS, "CALLS");
	for (size_t k = 0; k < t->info->nr_events && off < sizeof(line); k++) {
		snprintf(hdr, sizeof(hdr), "%.64s/call", t->info->events[k]);
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %*s", counter_cols(t->info->events[k]), hdr);
	}
	put_line(out, cols, line);
	for (size_t i = 0, drawn = 0; i < t->nr_order && (int)drawn < rows - head_lines - 1; i++) {
		const struct report_row *callers[CALLERS_SHOWN];
		size_t nc = t->callers_open ? top_callers(t, &t->funcs[t->order[i]], callers) : 0;

		format_row(line, sizeof(line), t, &t->funcs[t->order[i]], name_cols);
		put_line(out, cols, line);
		drawn++;
		for (size_t k = 0; k < nc && (int)drawn < rows - head_lines - 1; k++, drawn++) {
			format_caller(line, sizeof(line), callers[k], name_cols);
			put_line(out, cols, line);
		}
	}
	/* The rest of the screen, without a line feed that would scroll it. */
	fputs("\033[J", out);
	fflush(out);
}

static int top_check(void *ctx)
{
	struct top *t = ctx;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		errmsg("top needs a terminal on stdin and stdout; for machines use 'dlprof-bpf -i SECONDS --json' (JSON Lines)");
		return EXIT_USAGE;
	}
	(void)t;
	return 0;
}

static int top_start(void *ctx)
{
	struct top *t = ctx;
	int err = term_screen_enter(&t->screen, STDIN_FILENO, stdout);

	/* Rates need a whole interval: the first screen waits for it. */
	if (!err) {
		fputs("\033[H\033[Jdlprof-bpf top: probes attached, the first interval follows\r\n", stdout);
		fflush(stdout);
	}
	return err;
}

static void top_tick(void *ctx, const struct interval_head *h, const struct interval_func *funcs, size_t n,
		     const struct report_info *info)
{
	struct top *t = ctx;

	if (!t->order || t->n != n) {
		free(t->order);
		t->order = calloc(n ? n : 1, sizeof(*t->order));
		if (!t->order)
			return;
	}
	t->head = *h;
	t->funcs = funcs;
	t->n = n;
	t->info = info;
	sort_rows(t);
	draw(t);
}

static bool top_input(void *ctx)
{
	struct top *t = ctx;
	char keys[64];
	ssize_t len = read(t->screen.in_fd, keys, sizeof(keys));

	/* The terminal went away: nobody is looking any more. */
	if (len == 0 || (len < 0 && errno != EINTR && errno != EAGAIN))
		return true;
	for (ssize_t i = 0; i < len; i++) {
		if (keys[i] == 'q' || keys[i] == 'Q')
			return true;
		if (keys[i] == CALLERS_KEY || keys[i] == CALLERS_KEY - 'a' + 'A')
			t->callers_open = !t->callers_open;
		for (size_t k = 0; k < NR_SORT_KEYS; k++)
			if (keys[i] == sort_keys[k].key || keys[i] == sort_keys[k].key - 'a' + 'A')
				t->sort = (enum top_sort)k;
	}
	if (t->funcs && t->order) {
		sort_rows(t);
		draw(t);
	}
	return false;
}

static void top_stop(void *ctx)
{
	struct top *t = ctx;

	term_screen_leave(&t->screen);
}

int cmd_top(int argc, char **argv)
{
	struct top t = { .sort = SORT_CALLS };
	struct live_view view = {
		.check = top_check, .start = top_start, .tick = top_tick, .input_fd = STDIN_FILENO,
		.input = top_input, .stop = top_stop, .ctx = &t,
	};
	int status = live_profile(CLI_TOP, argc, argv, &view);

	/* Whatever ended it, the terminal is given back. */
	term_screen_leave(&t.screen);
	free(t.order);
	return status;
}
