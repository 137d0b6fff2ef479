// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <json-c/json.h>

#include "output/exporter.h"
#include "output/export_formats.h"
#include "output/report.h"
#include "output/report_html.h"
#include "util/path.h"
#include "util/sorted.h"

const char *export_comm(const struct export_head *h, uint32_t pid)
{
	size_t i = PARTITION_POINT(h->nr_procs, k, h->procs[k].pid < pid);

	if (i < h->nr_procs && h->procs[i].pid == pid)
		return h->procs[i].comm && *h->procs[i].comm ? h->procs[i].comm : NULL;
	return NULL;
}

const char *export_thread_comm(const struct export_head *h, uint32_t pid, uint32_t tid)
{
	size_t i = PARTITION_POINT(h->nr_threads, k, h->threads[k].tid < tid);
	const struct export_thread *t = i < h->nr_threads ? &h->threads[i] : NULL;

	if (t && t->tid == tid)
		return t->pid == pid && t->comm && *t->comm ? t->comm : NULL;
	return NULL;
}

/* RFC 4180: quote a field only when it holds a separator, a quote or a line break. */
static void csv_field(FILE *out, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

static bool timed(const struct export_call *c)
{
	return !c->unmatched && !c->entry_only && !c->unwound;
}

static int text_summary(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	report_print_table(out, rows, n, info);
	return 0;
}

static int text_begin(FILE *out, struct export_head *h)
{
	(void)h;
	fprintf(out, "%16s %9s %7s %7s %4s  %s\n", "TIME(s)", "DURATION", "PID", "TID", "CPU", "FUNCTION");
	return 0;
}

/* Seconds since the start of the recording, indented by depth: the call tree reads down. */
static void text_record(FILE *out, const struct export_head *h, const struct export_call *c)
{
	bool before = c->ts_ns < h->start_ns;
	uint64_t mag = before ? h->start_ns - c->ts_ns : c->ts_ns - h->start_ns;
	char ts[32], dur[24], oncpu[24];

	if (!timed(c))
		strcpy(dur, "-");
	else
		report_format_ns(dur, sizeof(dur), c->dur_ns);
	snprintf(ts, sizeof(ts), "%s%" PRIu64 ".%09" PRIu64, before ? "-" : "", mag / 1000000000,
		 mag % 1000000000);
	fprintf(out, "%16s %9s %7u %7u %4u  %*s%s (%s)", ts, dur, c->pid, c->tid, c->cpu,
		2 * (int)c->depth, "", c->func, path_base(c->lib));
	if (timed(c)) {
		report_format_ns(oncpu, sizeof(oncpu), c->oncpu_ns);
		fprintf(out, " oncpu=%s", oncpu);
		for (size_t k = 0; k < h->nr_events; k++)
			fprintf(out, " %s=%" PRIu64, h->events[k], c->counters[k]);
	}
	if (c->unmatched)
		fputs(" [unmatched]", out);
	if (c->entry_only)
		fputs(" [entry-only]", out);
	if (c->unwound)
		fputs(" [unwound]", out);
	if (c->scaled)
		fputs(" [scaled]", out);
	fputc('\n', out);
}

/* One row per function that was called, the numbers raw (ns, counts). */
/* --by: the group's columns, after the others (empty: unknown, or the host's no container). */
static void csv_group(FILE *out, const struct attr_group *g, enum attr_by by)
{
	if (attr_by_has_caller(by)) {
		fputc(',', out);
		csv_field(out, g->caller ? g->caller : "");
		fputc(',', out);
		csv_field(out, g->caller_module ? g->caller_module : "");
		if (by != ATTR_BY_CALLER_PROCESS)
			return;
		/* pid 0, comm empty: a function's unattributed calls, no one process's. */
		fprintf(out, ",%u,", g->pid);
		csv_field(out, g->comm ? g->comm : "");
	} else if (by == ATTR_BY_PROCESS) {
		fprintf(out, ",%u,", g->pid);
		csv_field(out, g->comm ? g->comm : "");
		fprintf(out, ",%" PRIu64, g->cgroup_id);
	} else if (by != ATTR_BY_FUNCTION) {
		fputc(',', out);
		csv_field(out, g->container_id ? g->container_id : "");
		fputc(',', out);
		csv_field(out, g->container ? g->container : "");
		fputc(',', out);
		csv_field(out, g->cgroup ? g->cgroup : "");
		fprintf(out, ",%" PRIu64, g->cgroup_id);
	}
}

static int csv_summary(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	fputs("lib,func,calls,timed,unmatched,total_ns,avg_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns,oncpu_ns", out);
	for (size_t k = 0; k < info->nr_events; k++) {
		fputc(',', out);
		csv_field(out, info->events[k]);
	}
	if (info->by == ATTR_BY_CALLER)
		fputs(",caller,caller_module", out);
	else if (info->by == ATTR_BY_CALLER_PROCESS)
		fputs(",caller,caller_module,pid,comm", out);
	else if (info->by == ATTR_BY_PROCESS)
		fputs(",pid,comm,cgroup_id", out);
	else if (info->by != ATTR_BY_FUNCTION)
		fputs(",container_id,container,cgroup,cgroup_id", out);
	fputs(",bound_ns,children_probe_share,latency\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct func_summary *s = &rows[i].s;
		struct latency_trust tr;

		if (!s->calls)
			continue;
		csv_field(out, rows[i].lib);
		fputc(',', out);
		csv_field(out, rows[i].func);
		fprintf(out, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
			",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64, s->calls, s->returns, s->unmatched,
			s->total_ns, s->avg_ns, s->min_ns, s->max_ns, s->p50_ns, s->p90_ns, s->p99_ns, s->oncpu_ns);
		for (size_t k = 0; k < info->nr_events; k++)
			fprintf(out, ",%" PRIu64, s->counters[k]);
		csv_group(out, &rows[i].group, info->by);
		/*
		 * Which times the row holds, as the JSON's "latency" says (single-stepped rows
		 * stay raw), and how far they can be believed: per-call times below bound_ns
		 * are within the calibration's spread.
		 */
		report_trust(&tr, &rows[i], info);
		fprintf(out, ",%" PRIu64 ",%.4f,%s\n", tr.bound_ns, tr.children_share,
			!info->compensated || rows[i].stepped ? "raw" : tr.uncertain ? "uncertain" : "compensated");
	}
	return 0;
}

static int csv_begin(FILE *out, struct export_head *h)
{
	fputs("ts_ns,dur_ns,pid,tid,cpu,lib,func,depth", out);
	for (size_t k = 0; k < h->nr_events; k++) {
		fputc(',', out);
		csv_field(out, h->events[k]);
	}
	fputs(",oncpu_ns\n", out);
	return 0;
}

static void csv_record(FILE *out, const struct export_head *h, const struct export_call *c)
{
	fprintf(out, "%" PRIu64 ",%" PRIu64 ",%u,%u,%u,", c->ts_ns, c->dur_ns, c->pid, c->tid, c->cpu);
	csv_field(out, c->lib);
	fputc(',', out);
	csv_field(out, c->func);
	fprintf(out, ",%u", c->depth);
	for (size_t k = 0; k < h->nr_events; k++)
		fprintf(out, ",%" PRIu64, c->counters[k]);
	fprintf(out, ",%" PRIu64 "\n", c->oncpu_ns);
}

static int json_summary(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	return report_print_json(out, rows, n, info);
}

/* One JSON object per line (JSON Lines), so that a stream of any length parses call by call. */
static void json_record(FILE *out, const struct export_head *h, const struct export_call *c)
{
	struct json_object *o = json_object_new_object(), *ev = json_object_new_object();

	if (!o || !ev) {
		json_object_put(o);
		json_object_put(ev);
		return;
	}
	json_object_object_add(o, "ts_ns", json_object_new_uint64(c->ts_ns));
	json_object_object_add(o, "dur_ns", json_object_new_uint64(c->dur_ns));
	json_object_object_add(o, "pid", json_object_new_int64(c->pid));
	json_object_object_add(o, "tid", json_object_new_int64(c->tid));
	json_object_object_add(o, "cpu", json_object_new_int64(c->cpu));
	json_object_object_add(o, "lib", json_object_new_string(c->lib));
	json_object_object_add(o, "func", json_object_new_string(c->func));
	json_object_object_add(o, "depth", json_object_new_int64(c->depth));
	json_object_object_add(o, "oncpu_ns", json_object_new_uint64(c->oncpu_ns));
	json_object_object_add(o, "timed", json_object_new_boolean(timed(c)));
	for (size_t k = 0; k < h->nr_events; k++)
		json_object_object_add(ev, h->events[k], json_object_new_uint64(c->counters[k]));
	json_object_object_add(o, "counters", ev);
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), out);
	fputc('\n', out);
	json_object_put(o);
}

#define SUMMARY_DUMP (EXPORT_USE_SUMMARY | EXPORT_USE_DUMP)

static const struct exporter exporters[] = {
	{ "text", "aligned columns for people (the default)", SUMMARY_DUMP, text_summary, text_begin,
	  text_record, NULL, NULL },
	{ "csv", "comma-separated values with a header row (RFC 4180)", SUMMARY_DUMP, csv_summary, csv_begin,
	  csv_record, NULL, NULL },
	{ "json", "JSON: one document for a summary (docs/json-output.md), one object per line for dump",
	  SUMMARY_DUMP, json_summary, NULL, json_record, NULL, NULL },
	{ "html", "one self-contained HTML page: sortable table, latency histograms, a trace's timeline (docs/report-html.md)",
	  EXPORT_USE_SUMMARY | EXPORT_USE_HIST, report_html_summary, NULL, NULL, NULL, NULL },
	{ "perfetto", "Chrome Trace Event JSON for ui.perfetto.dev and chrome://tracing (docs/export-perfetto.md)",
	  EXPORT_USE_TRACE, NULL, perfetto_begin, perfetto_record, perfetto_loss, perfetto_end },
	{ "folded", "folded stacks for flamegraph.pl and speedscope, weighted by --weight (docs/export-folded.md)",
	  EXPORT_USE_TRACE, NULL, folded_begin, folded_record, NULL, folded_end },
};

void export_json_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void export_us(FILE *out, int64_t ns)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	fprintf(out, "%s%" PRIu64 ".%03" PRIu64, ns < 0 ? "-" : "", mag / 1000, mag % 1000);
}

const struct exporter *exporter_table(size_t *n)
{
	*n = sizeof(exporters) / sizeof(exporters[0]);
	return exporters;
}

const struct exporter *exporter_find(const char *name)
{
	for (size_t i = 0; i < sizeof(exporters) / sizeof(exporters[0]); i++)
		if (!strcmp(exporters[i].name, name))
			return &exporters[i];
	return NULL;
}
