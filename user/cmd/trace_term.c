// SPDX-License-Identifier: GPL-2.0-only
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cmd/trace_term.h"
#include "elf/demangle.h"
#include "util/clock.h"

/* Damage lines beyond this many are counted, not listed. */
#define DAMAGE_LINES_MAX 10

int trace_cmd_args(enum cli_cmd cmd, int argc, char **argv, struct profile_opts *opts)
{
	char err[512];

	if (cli_parse_cmd(cmd, argc, argv, opts, err, sizeof(err))) {
		errmsg("%s", err);
		return EXIT_USAGE;
	}
	return opts->help ? CMD_HELP : 0;
}

int trace_cmd_open(struct trace_input **in, const char *path)
{
	char err[512];

	if (trace_input__open(in, path, err, sizeof(err))) {
		errmsg("%s; give a trace directory (record -o) or a merged .dlt file", err);
		return 1;
	}
	return 0;
}

int trace_cmd_read(enum cli_cmd cmd, int argc, char **argv,
		   int (*run)(struct trace_input *in, const struct profile_opts *opts))
{
	struct profile_opts opts;
	struct trace_input *in;
	int ret;

	ret = trace_cmd_args(cmd, argc, argv, &opts);
	if (ret)
		return ret;
	if (trace_cmd_open(&in, opts.input))
		return 1;
	ret = run(in, &opts);
	trace_input__free(in);
	return ret;
}

/* Damage said of a shard as a whole, or of its end: no bytes to point at. */
static bool whole_shard(enum trace_damage_reason why)
{
	return why == TRACE_DMG_MISSING || why == TRACE_DMG_FOREIGN || why == TRACE_DMG_SHORT;
}

void trace_report_damage(const struct trace_input *in, bool per_place)
{
	const struct trace_merge *m = trace_input__merge(in);
	size_t n = trace_merge__nr_damage(m), shown = 0, hidden = 0;
	struct trace_losses l;
	char line[512], recs[32];

	for (size_t i = 0; i < n; i++) {
		const struct merge_damage *d = trace_merge__damage(m, i);
		/* Another recording's shard mixed in is named by every command, not summed up. */
		bool foreign = d->d.reason == TRACE_DMG_FOREIGN;

		if (!per_place && !foreign)
			continue;
		if (shown >= DAMAGE_LINES_MAX && !foreign) {
			hidden++;
			continue;
		}
		shown++;
		recs[0] = 0;
		if (d->d.records)
			snprintf(recs, sizeof(recs), "%" PRIu64 " records", (uint64_t)d->d.records);
		if (whole_shard(d->d.reason))
			errmsg("%s: %s%s%s%s", d->source, trace_damage_reason_str(d->d.reason),
			       recs[0] ? " (" : "", recs, recs[0] ? " lost)" : "");
		else
			errmsg("%s: skipped %" PRIu64 " bytes at offset %" PRIu64 " (%s%s%s)", d->source,
			       (uint64_t)d->d.bytes, (uint64_t)d->d.offset,
			       trace_damage_reason_str(d->d.reason), recs[0] ? ", " : "", recs);
	}
	if (hidden)
		errmsg("... and %zu more damaged places", hidden);
	trace_input__losses(in, &l);
	if (trace_losses_describe(&l, line, sizeof(line)))
		errmsg("%s", line);
}

void trace_progress_init(struct trace_progress *p, const char *what)
{
	p->on = isatty(STDERR_FILENO);
	p->shown = false;
	/* Short runs finish before the first redraw and print nothing. */
	p->next_s = mono_seconds() + 0.5;
	p->what = what;
}

void trace_progress_update(struct trace_progress *p, const struct trace_input *in)
{
	struct trace_merge_stats st;
	double now;

	if (!p->on)
		return;
	now = mono_seconds();
	if (now < p->next_s)
		return;
	p->next_s = now + 0.25;
	trace_merge__stats(trace_input__merge(in), &st);
	fprintf(stderr, "\r%s: %3.0f%%, %" PRIu64 " records", p->what,
		100.0 * trace_input__progress(in), (uint64_t)st.records);
	p->shown = true;
}

void trace_progress_done(struct trace_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

char **trace_demangled_names(const struct trace_meta *m, bool no_demangle)
{
	char **names = calloc(m->nr_funcs ? m->nr_funcs : 1, sizeof(*names));

	for (__u32 i = 0; names && !no_demangle && i < m->nr_funcs; i++)
		names[i] = m->funcs[i].symbol ? demangle(m->funcs[i].symbol) : NULL;
	return names;
}

void trace_demangled_names_free(char **names, size_t n)
{
	for (size_t i = 0; names && i < n; i++)
		free(names[i]);
	free(names);
}
