// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/func_summary.h"
#include "output/caller_nest.h"
#include "output/exporter.h"
#include "output/output_file.h"
#include "output/overhead_note.h"
#include "output/report.h"
#include "output/report_html.h"
#include "trace/trace_agg.h"
#include "cmd/report_groups.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

/*
 * tl: also the calls per thread over time (html); groups: --by process,
 * each record also into its (function, process) row. NULL: neither.
 */
static int aggregate(struct trace_input *in, struct trace_agg *agg, struct report_timeline *tl,
		     struct report_groups *groups)
{
	const struct trace_meta *m = trace_input__meta(in);
	struct trace_progress prog;
	const struct call_record *r;
	__u64 n = 0;
	int ret;

	trace_progress_init(&prog, "reading");
	while ((ret = trace_input__next(in, &r)) > 0) {
		trace_agg__add(agg, r);
		if (tl)
			report_timeline_add(tl, r->pid, r->tid, r->ts_ns);
		if (groups && report_groups__add(groups, m, r)) {
			ret = -ENOMEM;
			break;
		}
		if (!(++n & 0xffff))
			trace_progress_update(&prog, in);
	}
	trace_progress_done(&prog);
	return ret;
}

static void fill_info(const struct trace_meta *m, struct report_info *info)
{
	memset(info, 0, sizeof(*info));
	for (__u32 k = 0; k < m->nr_events; k++)
		info->events[k] = m->events[k];
	info->nr_events = m->nr_events;
	info->attach_mode = m->attach_mode ? m->attach_mode : "trace";
	info->from_trace = true;
	info->attach_ms = m->attach_ms;
	info->functions_attached = m->nr_funcs;
	info->functions_skipped = m->functions_skipped;
	info->drops = trace_meta__drops(m) + trace_meta__write_lost(m);
	info->orphan_returns = m->orphan_returns;
	info->incomplete = m->untimed_calls;
	info->threads_unnamed = m->threads_unnamed;
	if (m->last_flush_ns > m->mono_start_ns)
		info->elapsed_s = (double)(m->last_flush_ns - m->mono_start_ns) / 1e9;
}

/*
 * What the probes cost the targets while recording: each function's calls
 * at its class's calibrated pair cost, where the trace says both (traces
 * written before either say nothing). profiles: what info->overhead names,
 * kept until the report is written. 0 or -ENOMEM.
 */
static int estimate_overhead(const struct trace_meta *m, const struct report_row *rows, struct report_info *info,
			     struct func_profile **profiles)
{
	struct func_profile *p;

	if (!m->probe_classes || !m->probe_pair_ns[DLPROF_PROBE_EMULATED])
		return 0;
	p = calloc(m->nr_funcs ? m->nr_funcs : 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (__u32 i = 0; i < m->nr_funcs; i++)
		p[i] = (struct func_profile){ .lib = rows[i].lib, .func = rows[i].func, .mangled = rows[i].mangled,
					      .entry_only = rows[i].entry_only, .stepped = rows[i].stepped,
					      .s = rows[i].s };
	for (int k = 0; k < DLPROF_PROBE_CLASSES; k++)
		info->probe_pair_ns[k] = m->probe_pair_ns[k];
	probe_overhead_estimate(p, m->nr_funcs, info->probe_pair_ns, &info->overhead);
	/*
	 * The threads the trace names made the timed calls (each is named at
	 * its first), as the live summary counted them, unless some went
	 * unnamed or untimed.
	 */
	probe_overhead_bound(&info->overhead, info->elapsed_s, m->nr_cpus,
			     m->threads_unnamed || m->untimed_calls ? 0 : m->nr_threads);
	info->remedy.lib = m->nr_funcs ? m->funcs[0].lib : NULL;
	*profiles = p;
	return 0;
}

/* As the live mode says it after its summary: past the threshold, one line. */
static void warn_overhead(const struct report_info *info)
{
	char line[1024];

	if (overhead_warning(line, sizeof(line), &info->overhead, info->elapsed_s, &info->remedy))
		warnmsg("%s", line);
}

/*
 * The threads' names: each thread's own (pthread_setname_np) where the
 * metadata has it, else its process's command name (older traces).
 */
static void name_tracks(struct report_timeline *tl, const struct trace_meta *m)
{
	for (size_t i = 0; i < tl->nr_tracks; i++) {
		const struct trace_thread *t = trace_meta__find_thread(m, tl->tracks[i].pid, tl->tracks[i].tid);
		const struct trace_proc *p = trace_meta__find_process(m, tl->tracks[i].pid);

		if (t && *t->comm)
			tl->tracks[i].comm = t->comm;
		else
			tl->tracks[i].comm = p && p->comm && *p->comm ? p->comm : NULL;
	}
}

/* The summary into -o FILE (replaced whole once written) or stdout. 0 or -errno. */
static int write_summary(const struct exporter *e, const struct profile_opts *opts, const struct report_row *rows,
			 size_t n, const struct report_info *info)
{
	struct output_file *of = NULL;
	char err[512];
	FILE *out = stdout;
	int ret;

	if (opts->output && output_file__open(&of, opts->output, opts->input, err, sizeof(err))) {
		errmsg("%s", err);
		return -EINVAL;
	}
	if (of && !(out = output_file__stream(of)))
		ret = -errno;
	else
		ret = e->summary(out, rows, n, info);
	if (!ret && (fflush(out) || ferror(out)))
		ret = -errno ?: -EIO;
	if (!ret && of)
		ret = output_file__commit(of);
	if (ret)
		errmsg("cannot write the report%s%s: %s; %s", of ? " to " : "", of ? opts->output : "",
		       strerror(-ret), of ? "free some space or choose another file with -o" : "check where stdout goes");
	output_file__free(of);
	return ret;
}

static int report(struct trace_input *in, const struct profile_opts *opts)
{
	const struct exporter *e = exporter_find(opts->format);
	const struct trace_meta *m = trace_input__meta(in);
	bool draws = e->uses & EXPORT_USE_HIST;
	struct report_timeline tl = { 0 };
	bool by_process = opts->by == ATTR_BY_PROCESS || attr_by_has_caller(opts->by);
	struct report_groups groups = { .by_caller = attr_by_has_caller(opts->by),
					.with_process = opts->by == ATTR_BY_CALLER_PROCESS };
	struct report_row *rows = NULL;
	struct func_profile *profiles = NULL;
	char **demangled = NULL;
	struct report_info info;
	struct trace_agg agg;
	size_t nr_rows = m->nr_funcs;
	int ret, status = 1;

	if (opts->by != ATTR_BY_FUNCTION && !by_process) {
		errmsg("report --by %s: a trace keeps each process's name and cgroup id, not cgroup paths; "
		       "use --by process, caller or caller,process, or --by %s while profiling live", attr_by_name(opts->by),
		       attr_by_name(opts->by));
		return 2;
	}
	if (groups.by_caller && !m->nr_callers) {
		errmsg("report --by %s: this trace names no callers (its records keep their return address "
		       "only when recorded with --by caller); record it with --by caller", attr_by_name(opts->by));
		return 2;
	}
	if (trace_agg__init(&agg, m->nr_funcs) || (draws && report_timeline_init(&tl, m->mono_start_ns))) {
		errmsg("out of memory");
		trace_agg__fini(&agg);
		return 1;
	}
	ret = aggregate(in, &agg, draws ? &tl : NULL, by_process ? &groups : NULL);
	if (ret < 0) {
		errmsg("reading the trace failed: %s; try on a machine with more memory",
			     strerror(-ret));
		goto cleanup;
	}
	rows = calloc(m->nr_funcs ? m->nr_funcs : 1, sizeof(*rows));
	demangled = trace_demangled_names(m, opts->no_demangle);
	if (!rows || !demangled) {
		errmsg("out of memory");
		goto cleanup;
	}
	for (__u32 i = 0; i < m->nr_funcs; i++) {
		rows[i].lib = m->funcs[i].lib;
		rows[i].func = demangled[i] ?: m->funcs[i].symbol;
		rows[i].mangled = demangled[i] ? m->funcs[i].symbol : NULL;
		func_summary_build(&rows[i].s, &agg.stats[i], agg.calls[i]);
		rows[i].hist = agg.stats[i].hist;
		rows[i].stepped = m->funcs[i].stepped;
		rows[i].entry_only = m->funcs[i].entry_only;
	}
	fill_info(m, &info);
	if (estimate_overhead(m, rows, &info, &profiles)) {
		errmsg("out of memory");
		goto cleanup;
	}
	if (by_process) {
		free(rows);
		rows = NULL;
		if (report_groups__rows(&groups, m, demangled, &rows, &nr_rows)) {
			errmsg("out of memory");
			goto cleanup;
		}
	}
	report_sort(rows, nr_rows);
	info.wide = opts->wide;
	info.callers_top = opts->callers < 0 ? 0 : opts->callers ? (size_t)opts->callers : CALLER_NEST_TOP_DEFAULT;
	info.by = (enum attr_by)opts->by;
	if (draws) {
		name_tracks(&tl, m);
		info.timeline = &tl;
	}
	if (write_summary(e, opts, rows, nr_rows, &info))
		goto cleanup;
	warn_overhead(&info);
	trace_report_damage(in, false);
	if (agg.unknown_func)
		errmsg("%" PRIu64 " records name functions the metadata does not list; "
			     "they are left out", (uint64_t)agg.unknown_func);
	status = 0;
cleanup:
	report_timeline_fini(&tl);
	free(profiles);
	free(rows);
	trace_demangled_names_free(demangled, m->nr_funcs);
	trace_agg__fini(&agg);
	report_groups__fini(&groups);
	return status;
}

int cmd_report(int argc, char **argv)
{
	return trace_cmd_read(CLI_REPORT, argc, argv, report);
}
