// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <json-c/json.h>

#include "output/interval_json.h"
#include "output/overhead_note.h"

/* The numbers an interval and the totals share, under the same keys, so that a reader sums one into the other. */
struct span {
	uint64_t calls, timed, unmatched, total_ns, oncpu_ns, p50_ns, p99_ns;
	const uint64_t *counters;
};

static int add_u64(struct json_object *o, const char *key, uint64_t v)
{
	struct json_object *n = json_object_new_uint64(v);

	return n ? json_object_object_add(o, key, n) : -ENOMEM;
}

static struct json_object *span_json(const struct span *s, const struct report_info *info)
{
	struct json_object *o = json_object_new_object(), *ctr = json_object_new_object();
	int err = 0;

	if (!o || !ctr) {
		json_object_put(o);
		json_object_put(ctr);
		return NULL;
	}
	err |= add_u64(o, "calls", s->calls);
	err |= add_u64(o, "timed", s->timed);
	err |= add_u64(o, "unmatched", s->unmatched);
	err |= add_u64(o, "total_ns", s->total_ns);
	err |= add_u64(o, "oncpu_ns", s->oncpu_ns);
	err |= add_u64(o, "p50_ns", s->p50_ns);
	err |= add_u64(o, "p99_ns", s->p99_ns);
	err |= json_object_object_add(o, "counters", ctr);
	for (size_t k = 0; k < info->nr_events && !err; k++)
		err |= add_u64(ctr, info->events[k], s->counters[k]);
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *func_json(const struct interval_func *f, const struct report_info *info)
{
	const struct func_summary *t = &f->row->s;
	const struct func_delta *d = &f->d;
	struct span total = { t->calls, t->returns, t->unmatched, t->total_ns, t->oncpu_ns, t->p50_ns, t->p99_ns,
			      t->counters };
	struct span delta = { d->calls, d->returns, d->unmatched, d->total_ns, d->oncpu_ns, d->p50_ns, d->p99_ns,
			      d->counters };
	struct json_object *o = json_object_new_object(), *di = span_json(&delta, info), *to = span_json(&total, info);
	struct latency_trust tr;
	int err = 0;

	if (!o || !di || !to) {
		json_object_put(o);
		json_object_put(di);
		json_object_put(to);
		return NULL;
	}
	err |= json_object_object_add(o, "interval", di);
	err |= json_object_object_add(o, "total", to);
	err |= json_object_object_add(o, "lib", json_object_new_string(f->row->lib));
	err |= json_object_object_add(o, "name", json_object_new_string(f->row->func));
	if (f->row->mangled && strcmp(f->row->mangled, f->row->func))
		err |= json_object_object_add(o, "mangled", json_object_new_string(f->row->mangled));
	/*
	 * As in the summary: its times are raw where the others are
	 * compensated, or rest mostly on its nested calls' probes.
	 */
	report_trust(&tr, f->row, info);
	if (f->row->stepped && info->compensated)
		err |= json_object_object_add(o, "latency", json_object_new_string("raw"));
	else if (tr.uncertain)
		err |= json_object_object_add(o, "latency", json_object_new_string("uncertain"));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int interval_json_print(FILE *out, const struct interval_head *h, const struct interval_func *funcs, size_t n,
			const struct report_info *info)
{
	struct json_object *doc = json_object_new_object(), *arr = json_object_new_array(), *evs;
	int err = 0;

	if (!doc || !arr) {
		json_object_put(doc);
		json_object_put(arr);
		return -ENOMEM;
	}
	err |= json_object_object_add(doc, "functions", arr);
	err |= add_u64(doc, "interval", h->seq);
	err |= json_object_object_add(doc, "t_s", json_object_new_double(h->t_s));
	err |= json_object_object_add(doc, "interval_s", json_object_new_double(h->interval_s));
	evs = json_object_new_array();
	err |= evs ? json_object_object_add(doc, "events", evs) : -ENOMEM;
	for (size_t k = 0; k < info->nr_events && !err; k++)
		err |= json_object_array_add(evs, json_object_new_string(info->events[k]));
	err |= add_u64(doc, "orphan_returns", info->orphan_returns);
	err |= add_u64(doc, "untimed_calls", info->incomplete);
	/* Which times these are, and what the probes cost so far: as the summary says them. */
	err |= report_latency_json(doc, info);
	err |= overhead_json(doc, &info->overhead, info->probe_pair_ns, info->elapsed_s);
	for (size_t i = 0; i < n && !err; i++) {
		struct json_object *f;

		if (!funcs[i].row->s.calls)
			continue;
		f = func_json(&funcs[i], info);
		err |= f ? json_object_array_add(arr, f) : -ENOMEM;
	}
	if (!err) {
		fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), out);
		fputc('\n', out);
	}
	json_object_put(doc);
	return err ? -ENOMEM : 0;
}
