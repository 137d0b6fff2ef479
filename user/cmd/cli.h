/* SPDX-License-Identifier: GPL-2.0-only */
/* Every command's options: one table makes the parsers and the help texts. */
#ifndef DLPROF_CLI_H
#define DLPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "probe/probe_table.h"
#include "trace/trace_block.h"
#include "probe/target.h"
#include "util/str_list.h"

/* The exit status of a command line the tool cannot take (as getopt tools use). */
#define EXIT_USAGE 2
/*
 * What a command returns, instead of an exit status, when its options ask
 * for --help: the command table (commands.c) prints that command's help and
 * exits 0, so no command needs the table.
 */
#define CMD_HELP (-2)

/* The commands, as the option table names them (a mask: an option may serve several). */
enum cli_cmd {
	CLI_LIVE = 1 << 0,
	CLI_RECORD = 1 << 1,
	CLI_MERGE = 1 << 2,
	CLI_REPORT = 1 << 3,
	CLI_DUMP = 1 << 4,
	CLI_EXPORT = 1 << 5,
	CLI_TOP = 1 << 6,
	CLI_AGENT = 1 << 7,
	CLI_LIST = 1 << 8,
};
#define CLI_PROFILE (CLI_LIVE | CLI_RECORD)
/* What selects and drives a profile: live, record and top share it. */
#define CLI_TARGET (CLI_PROFILE | CLI_TOP)
#define CLI_READ (CLI_MERGE | CLI_REPORT | CLI_DUMP | CLI_EXPORT)
#define CLI_ALL (CLI_TARGET | CLI_READ | CLI_AGENT | CLI_LIST)
/* The options the agent shares with the profiling commands (top too): what to probe, and where. */
#define CLI_PROBING (CLI_TARGET | CLI_AGENT)
/* What chooses the functions and their probes: list shows what a profile with them would probe. */
#define CLI_SELECTING (CLI_PROBING | CLI_LIST)

struct profile_opts {
	struct str_list libs;		/* --lib */
	struct str_list funcs;		/* --func: include globs (none: every function) */
	struct str_list excludes;	/* --exclude */
	struct str_list exact;		/* agent --exact: functions the budget keeps linked first */
	struct str_list cgroups;	/* --cgroup: cgroup v2 paths as given */
	struct str_list containers;	/* --container: container id prefixes */
	pid_t pids[TARGET_PIDS_MAX];	/* -p, in order given */
	size_t nr_pids;
	double duration_s;		/* -d; 0: until the command exits or a signal */
	double interval_s;		/* -i; 0: only at the end */
	const char *events;		/* -e: comma-separated perf event names; NULL: the default set */
	bool list_events;		/* -e list / --list-events */
	bool json;			/* --json: --format json */
	int attach_mode;		/* enum attach_mode */
	bool placement_entry;		/* --placement entry: probes stay on the entry unless it cannot take one */
	bool unwind_unsafe;		/* --unwind unsafe: return probes even where unwinding cannot be repaired */
	int verbose;
	bool help;
	bool version;
	char **command;			/* after "--": argv to launch, NULL-terminated; NULL: none */
	const char *output;		/* -o: the summary file; for record, the trace directory */
	double kill_after_s;		/* --kill-after: SIGTERM to SIGKILL when the profile stops the command */
	bool leave_running;		/* --leave-running: the profile's end leaves the command alone */
	bool no_demangle;		/* --no-demangle: symbols as the library spells them */
	bool wide;			/* --wide: the table prints names whole */
	long callers;			/* --callers: listed under a function by caller; 0: the default, -1: all */
	int by;				/* --by: enum attr_by (model/attribution.h); 0: function */
	bool raw_latency;		/* --raw-latency: times as measured, the probes' own cost included */
	bool boundary;			/* --boundary: only the functions the target's other modules import */
	/* record only */
	bool record;			/* parsing for "dlprof-bpf record" */
	__u64 ringbuf_bytes;		/* --ringbuf-size; 0: the default */
	bool no_compress;		/* --compress none */
	/* merge, report, dump */
	const char *input;		/* the trace directory or .dlt file */
	bool csv;			/* dump --csv: --format csv */
	const char *format;		/* --format: an exporter's name (output/exporter.h); "text" by default */
	const char *weight;		/* export --weight: wall, oncpu or an event name; NULL: wall */
	enum trace_compression comp;	/* merge --compress */
	int comp_level;
	/* agent only (docs/agent.md); environment fallbacks are the agent's */
	const char *listen;		/* --listen ADDR:PORT; NULL: DLPROF_AGENT_LISTEN or the default */
	double max_overhead_pct;	/* --max-overhead: percent of one CPU; 0: not given */
	bool no_budget;			/* --max-overhead off */
	long max_series;		/* --max-series; 0: not given */
	size_t max_functions;		/* --max-functions; 0: the default bound (probe_table.h) */
	double refresh_s;		/* --refresh: how often the metrics are read; 0: not given */
	double series_grace_s;		/* --series-grace: a removed container's series kept; 0: not given */
	const char *otlp_endpoint;	/* --otlp-endpoint URL: OTLP/HTTP collector, "v1/metrics" appended */
	double otlp_interval_s;		/* --otlp-interval: between pushes; 0: not given */
	const char *k8s_namespace;	/* --namespace GLOB: only pods of matching namespaces; NULL: any */
	const char *k8s_pod;		/* --pod GLOB: only matching pods; NULL: any */
	const char *kubelet_url;	/* --kubelet-url */
	const char *kubelet_token;	/* --kubelet-token FILE */
	const char *kubelet_ca;		/* --kubelet-ca FILE|insecure */
};

#define RINGBUF_BYTES_DEFAULT (16u << 20)
#define KILL_AFTER_S_DEFAULT 5.0

/*
 * Parse argv into opts for one command; argv[0] is the command's name.
 * Returns 0, or -EINVAL with a one-line message (no trailing newline) in err.
 */
int cli_parse_cmd(enum cli_cmd cmd, int argc, char **argv, struct profile_opts *opts, char *err, size_t err_sz);
/* The options of cmd, one line each, as --help shows them. */
void cli_print_options(FILE *out, enum cli_cmd cmd);
/* The uses (enum export_use) a command has for a format: what --format accepts there. */
unsigned int cli_format_uses(enum cli_cmd cmd);
/* The name a command is called by ("record"); of a mask, its lowest command's. From the command table (commands.c). */
const char *cli_cmd_name(enum cli_cmd cmd);
void cli_opts_free(struct profile_opts *opts);
/* What opts select, for the probe table; borrows opts' lists. */
void cli_selection(const struct profile_opts *opts, struct probe_selection *sel);

#endif /* DLPROF_CLI_H */
