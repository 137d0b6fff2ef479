// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/report.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

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

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct dumper {
	FILE *out;
	const struct trace_meta *m;
	char unknown[32];
};

/* Library and symbol of r, or "" and "#<id>" for an id the metadata lacks. */
static void func_names(struct dumper *d, const struct call_record *r, const char **lib,
		       const char **sym)
{
	if (r->func_id < d->m->nr_funcs) {
		*lib = d->m->funcs[r->func_id].lib;
		*sym = d->m->funcs[r->func_id].symbol;
		return;
	}
	snprintf(d->unknown, sizeof(d->unknown), "#%u", r->func_id);
	*lib = "";
	*sym = d->unknown;
}

static void csv_header(struct dumper *d)
{
	fputs("ts_ns,dur_ns,pid,tid,cpu,lib,func,depth", d->out);
	for (__u32 k = 0; k < d->m->nr_events; k++) {
		fputc(',', d->out);
		csv_field(d->out, d->m->events[k]);
	}
	fputs(",oncpu_ns\n", d->out);
}

static void csv_row(struct dumper *d, const struct call_record *r)
{
	const char *lib, *sym;

	func_names(d, r, &lib, &sym);
	fprintf(d->out, "%" PRIu64 ",%" PRIu64 ",%u,%u,%u,", (uint64_t)r->ts_ns,
		(uint64_t)r->dur_ns, r->pid, r->tid, r->cpu);
	csv_field(d->out, lib);
	fputc(',', d->out);
	csv_field(d->out, sym);
	fprintf(d->out, ",%u", r->depth);
	for (__u32 k = 0; k < d->m->nr_events; k++)
		fprintf(d->out, ",%" PRIu64, (uint64_t)r->counters[k]);
	fprintf(d->out, ",%" PRIu64 "\n", (uint64_t)r->oncpu_ns);
}

static void text_header(struct dumper *d)
{
	fprintf(d->out, "%16s %9s %7s %7s %4s  %s\n", "TIME(s)", "DURATION", "PID", "TID", "CPU",
		"FUNCTION");
}

/* Seconds since the start of the recording, indented by depth: the call tree reads down. */
static void text_row(struct dumper *d, const struct call_record *r)
{
	bool before = r->ts_ns < d->m->mono_start_ns;
	uint64_t mag = before ? d->m->mono_start_ns - r->ts_ns : r->ts_ns - d->m->mono_start_ns;
	bool timed = !(r->flags & (CALL_F_UNMATCHED | CALL_F_ENTRY_ONLY | CALL_F_UNWOUND));
	const char *lib, *sym;
	char ts[32], dur[24], oncpu[24];

	func_names(d, r, &lib, &sym);
	if (!timed)
		strcpy(dur, "-");
	else
		report_format_ns(dur, sizeof(dur), r->dur_ns);
	snprintf(ts, sizeof(ts), "%s%" PRIu64 ".%09" PRIu64, before ? "-" : "", mag / 1000000000,
		 mag % 1000000000);
	fprintf(d->out, "%16s %9s %7u %7u %4u  %*s%s (%s)", ts, dur, r->pid, r->tid, r->cpu,
		2 * r->depth, "", sym, base_name(lib));
	if (timed) {
		report_format_ns(oncpu, sizeof(oncpu), r->oncpu_ns);
		fprintf(d->out, " oncpu=%s", oncpu);
		for (__u32 k = 0; k < d->m->nr_events; k++)
			fprintf(d->out, " %s=%" PRIu64, d->m->events[k], (uint64_t)r->counters[k]);
	}
	if (r->flags & CALL_F_UNMATCHED)
		fputs(" [unmatched]", d->out);
	if (r->flags & CALL_F_ENTRY_ONLY)
		fputs(" [entry-only]", d->out);
	if (r->flags & CALL_F_UNWOUND)
		fputs(" [unwound]", d->out);
	if (r->flags & CALL_F_SCALED)
		fputs(" [scaled]", d->out);
	fputc('\n', d->out);
}

static int dump(struct trace_input *in, const struct profile_opts *opts)
{
	bool csv = opts->csv;
	struct dumper d = { .out = stdout, .m = trace_input__meta(in) };
	const struct call_record *r;
	int ret;

	if (csv)
		csv_header(&d);
	else
		text_header(&d);
	while ((ret = trace_input__next(in, &r)) > 0) {
		if (csv)
			csv_row(&d, r);
		else
			text_row(&d, r);
		if (ferror(d.out))
			break;
	}
	if (ret < 0) {
		errmsg("reading the trace failed: %s; try on a machine with more memory",
			     strerror(-ret));
		return 1;
	}
	if (fflush(d.out) || ferror(d.out)) {
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
