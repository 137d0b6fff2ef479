// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlprof.h"
#include "output/exporter.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

_Static_assert(DLPROF_MAX_EVENTS <= EXPORT_MAX_COUNTERS, "an exported call holds every counter");

struct dumper {
	const struct trace_meta *m;
	char **demangled;		/* per function id; NULL where the symbol does not demangle */
	const char *events[DLPROF_MAX_EVENTS];
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

static int dump(struct trace_input *in, const struct profile_opts *opts)
{
	const struct exporter *e = exporter_find(opts->format);
	struct dumper d = { .m = trace_input__meta(in) };
	const struct call_record *r;
	struct export_call c;
	FILE *out = stdout;
	int ret;

	d.demangled = trace_demangled_names(d.m, opts->no_demangle);
	if (!d.demangled) {
		errmsg("out of memory");
		return 1;
	}
	for (__u32 k = 0; k < d.m->nr_events; k++)
		d.events[k] = d.m->events[k];
	d.head = (struct export_head){ .events = d.events, .nr_events = d.m->nr_events,
				       .start_ns = d.m->mono_start_ns };
	if (e->begin)
		e->begin(out, &d.head);
	while ((ret = trace_input__next(in, &r)) > 0) {
		export_call_of(&d, r, &c);
		e->record(out, &d.head, &c);
		if (ferror(out))
			break;
	}
	if (e->end && ret >= 0)
		e->end(out, &d.head);
	trace_demangled_names_free(d.demangled, d.m->nr_funcs);
	if (ret < 0) {
		errmsg("reading the trace failed: %s; try on a machine with more memory",
			     strerror(-ret));
		return 1;
	}
	if (fflush(out) || ferror(out)) {
		errmsg("cannot write the dump: %s; check where stdout goes (disk full?)",
			     strerror(errno));
		return 1;
	}
	trace_report_damage(in, false);
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	return trace_cmd_read(CLI_DUMP, argc, argv, dump);
}
