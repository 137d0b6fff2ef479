// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "output/exporter.h"
#include "cmd/call_stream.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

static int dump(struct trace_input *in, const struct profile_opts *opts)
{
	FILE *out = stdout;
	int ret;

	ret = call_stream_write(in, exporter_find(opts->format), out, EXPORT_WEIGHT_WALL, opts->no_demangle);
	if (ret < 0) {
		errmsg("reading the trace failed: %s; try on a machine with more memory", strerror(-ret));
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
