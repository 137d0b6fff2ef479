// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlprof.h"
#include "cmd/call_stream.h"
#include "cmd/trace_term.h"

_Static_assert(DLPROF_MAX_EVENTS <= EXPORT_MAX_COUNTERS, "an exported call holds every counter");

struct dumper {
	const struct trace_meta *m;
	char **demangled;		/* per function id; NULL where the symbol does not demangle */
	const char *events[DLPROF_MAX_EVENTS];
	struct export_proc *procs;
	struct export_thread *threads;
	struct export_head head;
	char unknown[32];
};

/* A record as the exporters take it: plain numbers and the names the metadata gives it. */
static void export_call_of(struct dumper *d, const struct call_record *r, struct export_call *c)
{
	*c = (struct export_call){
		.ts_ns = r->ts_ns, .dur_ns = r->dur_ns, .oncpu_ns = r->oncpu_ns,
		.pid = r->pid, .tid = r->tid, .cpu = r->cpu, .depth = r->depth,
		.unmatched = r->flags & CALL_F_UNMATCHED, .entry_only = r->flags & CALL_F_ENTRY_ONLY,
		.unwound = r->flags & CALL_F_UNWOUND, .scaled = r->flags & CALL_F_SCALED,
	};
	for (__u32 k = 0; k < d->m->nr_events; k++)
		c->counters[k] = r->counters[k];
	if (r->caller) {
		const struct trace_caller *tc = trace_meta__find_caller(d->m, r->pid, r->caller);

		c->caller = tc ? tc->symbol : "?";
		c->caller_module = tc ? tc->module : "?";
	}
	if (r->func_id < d->m->nr_funcs) {
		c->lib = d->m->funcs[r->func_id].lib;
		c->func = d->demangled[r->func_id] ?: d->m->funcs[r->func_id].symbol;
		return;
	}
	/* An id the metadata lacks: "" and "#<id>". */
	snprintf(d->unknown, sizeof(d->unknown), "#%u", r->func_id);
	c->lib = "";
	c->func = d->unknown;
}

static int head_init(struct dumper *d, int weight)
{
	const struct trace_meta *m = d->m;

	for (__u32 k = 0; k < m->nr_events; k++)
		d->events[k] = m->events[k];
	d->procs = calloc(m->nr_procs ? m->nr_procs : 1, sizeof(*d->procs));
	if (!d->procs)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_procs; i++)
		d->procs[i] = (struct export_proc){ m->procs[i].pid, m->procs[i].comm };
	d->threads = calloc(m->nr_threads ? m->nr_threads : 1, sizeof(*d->threads));
	if (!d->threads)
		return -ENOMEM;
	for (size_t i = 0; i < m->nr_threads; i++)
		d->threads[i] = (struct export_thread){ m->threads[i].tid, m->threads[i].pid, m->threads[i].comm };
	d->head = (struct export_head){ .events = d->events, .nr_events = m->nr_events,
					.start_ns = m->mono_start_ns, .procs = d->procs,
					.nr_procs = m->nr_procs, .threads = d->threads,
					.nr_threads = m->nr_threads, .weight = weight };
	return 0;
}

static void loss(FILE *out, const struct exporter *e, const struct export_head *h, const char *what,
		 const char *source, __u64 records, __u64 bytes)
{
	struct export_loss l = { what, source, records, bytes };

	e->loss(out, h, &l);
}

/* What the metadata counts as lost, then each damaged place this read met. */
static void write_losses(struct trace_input *in, const struct exporter *e, const struct export_head *h, FILE *out)
{
	const struct trace_meta *m = trace_input__meta(in);
	const struct trace_merge *mg = trace_input__merge(in);
	char name[32];

	for (__u32 c = 0; c < m->nr_cpus; c++) {
		snprintf(name, sizeof(name), "cpu%u", c);
		if (m->cpus[c].ringbuf_drops)
			loss(out, e, h, "records dropped (ringbuf full)", name, m->cpus[c].ringbuf_drops, 0);
		if (m->cpus[c].write_lost)
			loss(out, e, h, "records lost to write errors", name, m->cpus[c].write_lost, 0);
	}
	if (m->merged && m->merge.damaged_blocks)
		loss(out, e, h, "damaged parts skipped by the merge", "", m->merge.skipped_records,
		     m->merge.skipped_bytes);
	for (size_t i = 0; i < trace_merge__nr_damage(mg); i++) {
		const struct merge_damage *d = trace_merge__damage(mg, i);

		loss(out, e, h, trace_damage_reason_str(d->d.reason), d->source, d->d.records, d->d.bytes);
	}
	if (!m->ended_cleanly && !m->closed)
		loss(out, e, h, "the recording was cut off: the calls after its last flush were never written", "", 0, 0);
}

int call_stream_write(struct trace_input *in, const struct exporter *e, FILE *out, int weight, bool no_demangle)
{
	struct dumper d = { .m = trace_input__meta(in) };
	const struct call_record *r;
	struct export_call c;
	int ret, err;

	d.demangled = trace_demangled_names(d.m, no_demangle);
	if (!d.demangled)
		return -ENOMEM;
	ret = head_init(&d, weight);
	if (!ret && e->begin)
		ret = e->begin(out, &d.head);
	if (ret)
		goto cleanup;
	while ((ret = trace_input__next(in, &r)) > 0) {
		export_call_of(&d, r, &c);
		e->record(out, &d.head, &c);
		if (ferror(out))
			break;
	}
	if (ret >= 0 && e->loss)
		write_losses(in, e, &d.head, out);
	if (e->end) {
		err = e->end(out, &d.head);
		if (ret >= 0)
			ret = err;
	}
cleanup:
	free(d.procs);
	free(d.threads);
	trace_demangled_names_free(d.demangled, d.m->nr_funcs);
	return ret < 0 ? ret : 0;
}
