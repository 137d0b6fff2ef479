// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/func_summary.h"
#include "output/caller_nest.h"

/* A function's rows: where they start in the sorted copy, how many, their total time. */
struct func_span {
	size_t first, n;
	uint64_t total_ns;
};

static int by_func_then_time(const void *a, const void *b)
{
	const struct report_row *x = a, *y = b;
	int c = strcmp(x->lib, y->lib);

	if (!c)
		c = strcmp(x->func, y->func);
	if (c)
		return c;
	if (x->s.total_ns != y->s.total_ns)
		return x->s.total_ns < y->s.total_ns ? 1 : -1;
	if (x->s.calls != y->s.calls)
		return x->s.calls < y->s.calls ? 1 : -1;
	c = strcmp(x->group.caller ? x->group.caller : "", y->group.caller ? y->group.caller : "");
	if (c)
		return c;
	/* By caller,process, one caller's processes in pid order. */
	return (x->group.pid > y->group.pid) - (x->group.pid < y->group.pid);
}

static int by_time(const void *a, const void *b)
{
	const struct func_span *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The sum of rows[0..n) into r, its histogram into hist when each row has one. */
static void sum_rows(struct report_row *r, const struct report_row *rows, size_t n, __u64 *hist)
{
	bool known = true;

	memset(hist, 0, sizeof(__u64) * HIST_BUCKETS);
	for (size_t i = 0; i < n; i++) {
		func_summary_add(&r->s, &rows[i].s);
		known &= rows[i].hist != NULL;
		for (size_t b = 0; known && b < HIST_BUCKETS; b++)
			hist[b] += rows[i].hist[b];
	}
	r->s.avg_ns = r->s.returns ? r->s.total_ns / r->s.returns : 0;
	r->s.raw_avg_ns = r->s.returns ? r->s.raw_total_ns / r->s.returns : 0;
	r->hist = known ? hist : NULL;
	if (!known)
		return;
	r->s.p50_ns = hist_quantile(hist, r->s.returns, 0.50, r->s.min_ns, r->s.max_ns);
	r->s.p90_ns = hist_quantile(hist, r->s.returns, 0.90, r->s.min_ns, r->s.max_ns);
	r->s.p99_ns = hist_quantile(hist, r->s.returns, 0.99, r->s.min_ns, r->s.max_ns);
}

/* A string the display rows point to, kept until caller_nest_free. */
static char *keep_str(struct caller_nest *cn, char *s)
{
	if (s)
		cn->strs[cn->nr_strs++] = s;
	return s;
}

/* "  name": a caller's name as the table nests it under its function. */
static char *indented(const char *name)
{
	size_t len = strlen(name);
	char *s = malloc(len + 3);

	if (s) {
		memcpy(s, "  ", 2);
		memcpy(s + 2, name, len + 1);
	}
	return s;
}

/* One function's display rows: its sum, its callers, the rest. */
static int nest_func(struct caller_nest *cn, const struct report_row *rows, size_t n, size_t top)
{
	size_t shown = top && n > top ? top : n, rest = n - shown;
	struct report_row *f = &cn->rows[cn->n++], *o;
	char buf[64];

	*f = (struct report_row){ .lib = rows[0].lib, .func = rows[0].func, .mangled = rows[0].mangled,
				  .entry_only = rows[0].entry_only, .stepped = rows[0].stepped, .caller_level = 1 };
	sum_rows(f, rows, n, cn->hists[cn->n - 1]);
	for (size_t i = 0; i < shown; i++) {
		struct report_row *c = &cn->rows[cn->n++];

		*c = rows[i];
		c->caller_level = 2;
		/* The table's name and library columns show the caller and its module, indented. */
		c->func = keep_str(cn, indented(rows[i].group.caller ? rows[i].group.caller : "-"));
		c->lib = rows[i].group.caller_module ? rows[i].group.caller_module : "-";
		c->mangled = NULL;
		if (!c->func)
			return -ENOMEM;
	}
	if (!rest)
		return 0;
	o = &cn->rows[cn->n++];
	/* By caller,process (its rows have a pid), a row is one caller in one process. */
	snprintf(buf, sizeof(buf), "  (%zu other caller%s%s)", rest, rest == 1 ? "" : "s",
		 rows[shown].group.pid ? " by process" : "");
	*o = (struct report_row){ .lib = "-", .entry_only = rows[0].entry_only, .stepped = rows[0].stepped,
				  .caller_level = 3 };
	o->func = keep_str(cn, strdup(buf));
	o->group.caller = o->func ? o->func + 2 : NULL;
	o->group.caller_module = "-";
	sum_rows(o, rows + shown, rest, cn->hists[cn->n - 1]);
	return o->func ? 0 : -ENOMEM;
}

int caller_nest_build(const struct report_row *rows, size_t n, size_t top, struct caller_nest *out)
{
	struct report_row *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	struct func_span *spans = calloc(n ? n : 1, sizeof(*spans));
	size_t nr_spans = 0;
	int err = 0;

	memset(out, 0, sizeof(*out));
	/* At most a sum and a rest per function, beside the rows. */
	out->rows = calloc(3 * n + 1, sizeof(*out->rows));
	out->hists = calloc(3 * n + 1, sizeof(*out->hists));
	out->strs = calloc(2 * n + 1, sizeof(*out->strs));
	if (!sorted || !spans || !out->rows || !out->hists || !out->strs) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		sorted[i] = rows[i];
	qsort(sorted, n, sizeof(*sorted), by_func_then_time);
	for (size_t i = 0; i < n; i++) {
		if (!nr_spans || strcmp(sorted[i].func, sorted[spans[nr_spans - 1].first].func) ||
		    strcmp(sorted[i].lib, sorted[spans[nr_spans - 1].first].lib))
			spans[nr_spans++].first = i;
		spans[nr_spans - 1].n++;
		spans[nr_spans - 1].total_ns += sorted[i].s.total_ns;
	}
	qsort(spans, nr_spans, sizeof(*spans), by_time);
	for (size_t i = 0; i < nr_spans && !err; i++)
		err = nest_func(out, sorted + spans[i].first, spans[i].n, top);
cleanup:
	free(sorted);
	free(spans);
	if (err)
		caller_nest_free(out);
	return err;
}

void caller_nest_free(struct caller_nest *cn)
{
	if (!cn)
		return;
	for (size_t i = 0; i < cn->nr_strs; i++)
		free(cn->strs[i]);
	free(cn->strs);
	free(cn->rows);
	free(cn->hists);
	memset(cn, 0, sizeof(*cn));
}
