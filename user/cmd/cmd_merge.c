// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "output/output_file.h"
#include "trace/trace_block.h"
#include "cmd/trace_cmds.h"
#include "trace/trace_dlt.h"
#include "trace/trace_input.h"
#include "cmd/trace_term.h"

static void write_error(const char *out, int err)
{
	errmsg("cannot write %s: %s; free some space or choose another file with -o", out,
		     strerror(-err));
}

static int merge(struct trace_input *in, const char *out, enum trace_compression comp,
		 int level)
{
	struct trace_progress prog;
	struct trace_losses l;
	struct trace_meta *meta = NULL;
	struct dlt_writer *w;
	const struct call_record *r;
	__u64 n = 0;
	int ret, err;

	w = dlt_writer__new(out, comp, level, 0);
	if (!w) {
		errmsg("cannot create %s: %s; choose a writable place with -o", out,
			     strerror(errno));
		return 1;
	}
	trace_progress_init(&prog, "merging");
	while ((ret = trace_input__next(in, &r)) > 0) {
		err = dlt_writer__add(w, r);
		if (err) {
			trace_progress_done(&prog);
			write_error(out, err);
			goto fail;
		}
		if (!(++n & 0xffff))
			trace_progress_update(&prog, in);
	}
	trace_progress_done(&prog);
	if (ret < 0) {
		errmsg("merge failed: %s; try on a machine with more memory", strerror(-ret));
		goto fail;
	}
	meta = trace_meta__dup(trace_input__meta(in));
	if (!meta) {
		errmsg("out of memory");
		goto fail;
	}
	trace_input__losses(in, &l);
	meta->merge.damaged_blocks = l.damaged;
	meta->merge.skipped_bytes = l.skipped_bytes;
	meta->merge.skipped_records = l.skipped_records;
	err = dlt_writer__finish(w, meta);
	if (err) {
		write_error(out, err);
		goto fail;
	}
	trace_report_damage(in, true);
	printf("%s: %" PRIu64 " records, %" PRIu64 " bytes\n", out, (uint64_t)n,
	       (uint64_t)dlt_writer__bytes(w));
	trace_meta__free(meta);
	dlt_writer__free(w);
	return 0;

fail:
	trace_meta__free(meta);
	dlt_writer__free(w);
	return 1;
}

int cmd_merge(int argc, char **argv)
{
	struct profile_opts opts;
	struct trace_input *in;
	char err[512];
	int ret;

	ret = trace_cmd_args(CLI_MERGE, argc, argv, &opts);
	if (ret)
		return ret;
	/* Before reading anything: a refused output is the whole answer. */
	if (output_file__check(opts.output, opts.input, err, sizeof(err))) {
		errmsg("%s", err);
		return 1;
	}
	if (trace_cmd_open(&in, opts.input))
		return 1;
	ret = merge(in, opts.output, opts.comp, opts.comp_level);
	trace_input__free(in);
	return ret;
}
