// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/exporter.h"
#include "output/output_file.h"
#include "cmd/call_stream.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

/* --weight against the trace's events: EXPORT_WEIGHT_*, a counter index, or -EINVAL said. */
static int weight_of(const struct trace_meta *m, const char *name)
{
	if (!name || !strcmp(name, "wall"))
		return EXPORT_WEIGHT_WALL;
	if (!strcmp(name, "oncpu"))
		return EXPORT_WEIGHT_ONCPU;
	for (__u32 k = 0; k < m->nr_events; k++)
		if (!strcmp(m->events[k], name))
			return (int)k;
	errmsg("--weight: '%s' is not wall, oncpu or an event this trace recorded (%u recorded); "
	       "'dlprof-bpf report' lists them", name, m->nr_events);
	return -EINVAL;
}

static int export_to(struct trace_input *in, const struct profile_opts *opts, FILE *out, int weight)
{
	int ret = call_stream_write(in, exporter_find(opts->format), out, weight, opts->no_demangle);

	if (ret < 0) {
		errmsg("exporting the trace failed: %s; try on a machine with more memory", strerror(-ret));
		return 1;
	}
	if (fflush(out) || ferror(out)) {
		errmsg("cannot write the export: %s; %s", strerror(errno),
		       opts->output ? "free some space or choose another file with -o" : "check where stdout goes (disk full?)");
		return 1;
	}
	return 0;
}

static int export(struct trace_input *in, const struct profile_opts *opts)
{
	int weight = weight_of(trace_input__meta(in), opts->weight);
	struct output_file *of = NULL;
	char err[512];
	FILE *out;
	int ret;

	if (weight == -EINVAL)
		return EXIT_USAGE;
	if (!opts->output) {
		ret = export_to(in, opts, stdout, weight);
		goto done;
	}
	if (output_file__open(&of, opts->output, opts->input, err, sizeof(err))) {
		errmsg("%s", err);
		return 1;
	}
	out = output_file__stream(of);
	ret = out ? export_to(in, opts, out, weight) : 1;
	if (!out)
		errmsg("cannot write %s: %s; free some space or choose another file with -o", opts->output,
		       strerror(errno));
	if (!ret && (ret = output_file__commit(of))) {
		errmsg("cannot write %s: %s; free some space or choose another file with -o", opts->output,
		       strerror(-ret));
		ret = 1;
	}
	output_file__free(of);
done:
	if (!ret)
		trace_report_damage(in, false);
	return ret;
}

int cmd_export(int argc, char **argv)
{
	return trace_cmd_read(CLI_EXPORT, argc, argv, export);
}
