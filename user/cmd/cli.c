// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe/attach.h"
#include "cmd/cli.h"
#include "model/attribution.h"
#include "output/exporter.h"

typedef int (*opt_handler)(struct profile_opts *o, const char *arg, char *err, size_t err_sz);

struct cli_option {
	unsigned int cmds;	/* enum cli_cmd mask: the commands that take it */
	const char *name;
	char short_name;	/* 0: long only */
	const char *arg_name;	/* NULL: takes no argument */
	const char *help;
	opt_handler handle;	/* NULL: a flag, the bool at flag_off set */
	size_t flag_off;
};

/* A flag option needs no handler: the table says which bool it sets. */
#define FLAG(field) .flag_off = offsetof(struct profile_opts, field)

static int fail(char *err, size_t err_sz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_sz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A comma-separated argument adds each part: "-f a,b" is "-f a -f b". */
static int push_split(struct str_list *l, const char *arg, const char *opt, char *err, size_t err_sz)
{
	const char *p = arg;

	for (;;) {
		size_t len = strcspn(p, ",");
		int ret;

		if (!len)
			return fail(err, err_sz, "--%s: empty name in '%s'", opt, arg);
		ret = str_list_push(l, p, len);
		if (ret)
			return ret;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

/*
 * Function globs, comma-separated as push_split() takes them, save that a
 * comma inside <...>, (...) or [...] is part of the name (a demangled C++
 * name as the table prints it: "f<char, int>(int, long)") and "\," is a
 * comma anywhere.
 */
static int push_split_names(struct str_list *l, const char *arg, const char *opt, char *err, size_t err_sz)
{
	char *name = malloc(strlen(arg) + 1);
	size_t len = 0;
	int depth = 0, ret = 0;

	if (!name)
		return -ENOMEM;
	for (const char *p = arg;; p++) {
		if (*p == '\\' && p[1] == ',') {
			name[len++] = *++p;
			continue;
		}
		if (*p && (*p != ',' || depth > 0)) {
			depth += (*p == '<' || *p == '(' || *p == '[') - (depth > 0 && (*p == '>' || *p == ')' || *p == ']'));
			name[len++] = *p;
			continue;
		}
		if (!len) {
			ret = fail(err, err_sz, "--%s: empty name in '%s'", opt, arg);
			break;
		}
		ret = str_list_push(l, name, len);
		len = 0;
		if (ret || !*p)
			break;
	}
	free(name);
	return ret;
}

static int parse_seconds(const char *arg, const char *opt, double *out, char *err, size_t err_sz)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v <= 0)
		return fail(err, err_sz, "-%s: '%s' is not a positive number of seconds", opt, arg);
	*out = v;
	return 0;
}

static int on_lib(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split(&o->libs, arg, "lib", err, err_sz);
}

static int on_func(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split_names(&o->funcs, arg, "func", err, err_sz);
}

static int on_exact(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split_names(&o->exact, arg, "exact", err, err_sz);
}

static int on_cgroup(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "--cgroup: empty path");
	return str_list_push(&o->cgroups, arg, strlen(arg));
}

static int on_container(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split(&o->containers, arg, "container", err, err_sz);
}

static int on_by(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	int by = attr_by_parse(arg);

	if (by < 0 && strchr(arg, ','))
		return fail(err, err_sz, "--by: '%s' combines keys that do not go together; one of %s "
			    "(caller,process is the one combination)", arg, attr_by_names());
	if (by < 0)
		return fail(err, err_sz, "--by: '%s' is not one of %s", arg, attr_by_names());
	o->by = by;
	return 0;
}

static int on_callers(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	char *end;
	long v;

	if (!strcmp(arg, "all")) {
		o->callers = -1;
		return 0;
	}
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 1 || v > 1000000)
		return fail(err, err_sz, "--callers: '%s' is not a number of callers (1 or more) or all", arg);
	o->callers = v;
	return 0;
}

static int on_exclude(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split_names(&o->excludes, arg, "exclude", err, err_sz);
}

/* -p 12,34 is -p 12 -p 34. */
static int on_pid(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	const char *p = arg;

	do {
		char *end;
		long v;

		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || v <= 0 || v > INT_MAX)
			return fail(err, err_sz, "-p: '%s' is not a process id or a comma-separated list of them", arg);
		if (o->nr_pids == TARGET_PIDS_MAX)
			return fail(err, err_sz, "-p: at most %d processes", TARGET_PIDS_MAX);
		o->pids[o->nr_pids++] = (pid_t)v;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

static int on_duration(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "d", &o->duration_s, err, err_sz);
}

static int on_interval(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "i", &o->interval_s, err, err_sz);
}

static int on_kill_after(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "-kill-after", &o->kill_after_s, err, err_sz);
}

static int on_events(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "-e: empty event list; -e list shows the events");
	if (!strcmp(arg, "list"))
		o->list_events = true;
	else
		o->events = arg;
	return 0;
}

static int on_attach(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	int mode = attach_mode_parse(arg);

	if (mode < 0)
		return fail(err, err_sz, "--attach: '%s' is not one of auto, session, multi, classic", arg);
	o->attach_mode = mode;
	return 0;
}

static int on_output(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "-o: empty name");
	o->output = arg;
	return 0;
}

/* SIZE with an optional K, M or G suffix; a power of two of at least a page, as the ringbuf needs. */
static int on_ringbuf_size(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (!errno && end != arg) {
		switch (*end) {
		case 'k': case 'K': v <<= 10; end++; break;
		case 'm': case 'M': v <<= 20; end++; break;
		case 'g': case 'G': v <<= 30; end++; break;
		}
	}
	if (errno || end == arg || *end || v < 4096 || v > (1ull << 31) || (v & (v - 1)))
		return fail(err, err_sz, "--ringbuf-size: '%s' is not a power of two from 4K to 2G", arg);
	o->ringbuf_bytes = v;
	return 0;
}

static int on_compress(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!strcmp(arg, "none"))
		o->no_compress = true;
	else if (!strcmp(arg, "zlib"))
		o->no_compress = false;
	else
		return fail(err, err_sz, "--compress: '%s' is not zlib or none", arg);
	return 0;
}

static int on_merge_compress(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (trace_compression_parse(arg, &o->comp, &o->comp_level))
		return fail(err, err_sz, "bad --compress '%s'; use none, zlib or zlib:1-9", arg);
	return 0;
}

static int on_format(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	size_t n;
	const struct exporter *e = exporter_table(&n);
	char names[128] = "";

	if (exporter_find(arg)) {
		o->format = arg;
		return 0;
	}
	for (size_t i = 0, off = 0; i < n && off < sizeof(names); i++)
		off += (size_t)snprintf(names + off, sizeof(names) - off, "%s%s", i ? ", " : "", e[i].name);
	return fail(err, err_sz, "--format: '%s' is not one of %s", arg, names);
}

static int on_html(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	o->format = "html";
	return on_output(o, arg, err, err_sz);
}

static int on_weight(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "--weight: empty name; use wall, oncpu or a recorded event");
	o->weight = arg;
	return 0;
}

static int on_placement(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!strcmp(arg, "entry"))
		o->placement_entry = true;
	else if (!strcmp(arg, "auto"))
		o->placement_entry = false;
	else
		return fail(err, err_sz, "--placement: '%s' is not auto or entry", arg);
	return 0;
}

static int on_unwind(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!strcmp(arg, "unsafe"))
		o->unwind_unsafe = true;
	else if (!strcmp(arg, "auto"))
		o->unwind_unsafe = false;
	else
		return fail(err, err_sz, "--unwind: '%s' is not auto or unsafe", arg);
	return 0;
}

static int on_verbose(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->verbose++;
	return 0;
}

static int on_listen(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "--listen: empty address; use ADDR:PORT, e.g. 127.0.0.1:9464");
	o->listen = arg;
	return 0;
}

static int on_max_overhead(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	char *end;
	double v;

	if (!strcmp(arg, "off")) {
		o->no_budget = true;
		return 0;
	}
	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || (*end && strcmp(end, "%")) || !isfinite(v) || v <= 0 || v > 10000)
		return fail(err, err_sz, "--max-overhead: '%s' is not a percentage of one CPU above 0 (e.g. 1 or 0.5%%) or off", arg);
	o->max_overhead_pct = v;
	return 0;
}

static int on_max_series(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 2 || v > 1000000)
		return fail(err, err_sz, "--max-series: '%s' is not a number of series from 2 to 1000000", arg);
	o->max_series = v;
	return 0;
}

static int on_max_functions(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v < 1)
		return fail(err, err_sz, "--max-functions: '%s' is not a number of functions (1 or more)", arg);
	o->max_functions = (size_t)v;
	return 0;
}

static int on_refresh(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "-refresh", &o->refresh_s, err, err_sz);
}

static int on_series_grace(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "-series-grace", &o->series_grace_s, err, err_sz);
}

static int on_k8s_namespace(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "--namespace: empty; give a Kubernetes namespace or a glob (kube-*)");
	o->k8s_namespace = arg;
	return 0;
}

static int on_k8s_pod(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (!*arg)
		return fail(err, err_sz, "--pod: empty; give a pod name or a glob (web-*)");
	o->k8s_pod = arg;
	return 0;
}

static int on_otlp_endpoint(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return fail(err, err_sz, "--otlp-endpoint: '%s' is not an http:// or https:// URL (e.g. http://otel-collector:4318)", arg);
	o->otlp_endpoint = arg;
	return 0;
}

static int on_otlp_interval(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return parse_seconds(arg, "-otlp-interval", &o->otlp_interval_s, err, err_sz);
}

static int on_kubelet_url(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8))
		return fail(err, err_sz, "--kubelet-url: '%s' is not an http:// or https:// URL (e.g. https://node1:10250)", arg);
	o->kubelet_url = arg;
	return 0;
}

static int on_kubelet_token(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (access(arg, R_OK))
		return fail(err, err_sz, "--kubelet-token: cannot read '%s': %s", arg, strerror(errno));
	o->kubelet_token = arg;
	return 0;
}

static int on_kubelet_ca(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	if (strcmp(arg, "insecure") && access(arg, R_OK))
		return fail(err, err_sz, "--kubelet-ca: cannot read '%s': %s (or say insecure)", arg, strerror(errno));
	o->kubelet_ca = arg;
	return 0;
}

static const struct cli_option options[] = {
	{ CLI_SELECTING, "lib", 'l', "LIB", "library to profile: path, soname or glob (libssl.so*); repeatable", on_lib, 0 },
	{ CLI_SELECTING, "func", 'f', "GLOB", "only functions matching GLOB; repeatable, comma-separated", on_func, 0 },
	{ CLI_SELECTING, "exclude", 'x', "GLOB", "leave out functions matching GLOB; repeatable", on_exclude, 0 },
	{ CLI_TARGET, "pid", 'p', "PID", "profile the running process PID (all its threads) and its descendants, those forked later too; repeatable, comma-separated", on_pid, 0 },
	{ CLI_LIST, "pid", 'p', "PID", "find the libraries as the running process PID sees them (its maps, its mount namespace)", on_pid, 0 },
	{ CLI_PROBING, "cgroup", 0, "PATH", "profile the processes of a cgroup v2 and its subtree, those that enter later too; absolute or relative to the cgroup2 mount; repeatable", on_cgroup, 0 },
	{ CLI_PROBING, "container", 0, "ID", "profile a running container: a prefix of its id (docker, containerd, CRI-O, podman); repeatable", on_container, 0 },
	{ CLI_PROFILE | CLI_REPORT | CLI_TOP, "by", 0, "KEY", "rows per function (default), or per function and process (PID, COMM), container, cgroup, caller or caller,process (docs/callers.md); keyed in the kernel (docs/containers.md); report: function, process, caller or caller,process; top: caller (w opens each function into its callers)", on_by, 0 },
	{ CLI_TARGET, "raw-latency", 0, NULL, "times as measured, the probes' own cost included (default: less the cost calibrated at start, docs/latency-compensation.md)", NULL, FLAG(raw_latency) },
	{ CLI_TARGET, "boundary", 0, NULL, "time the calls that enter the libraries from outside: only the functions the target's other modules import, not those a library only calls itself (docs/live-mode.md#boundary-mode)", NULL, FLAG(boundary) },
	{ CLI_TARGET, "duration", 'd', "SECONDS", "stop after SECONDS", on_duration, 0 },
	{ CLI_PROFILE, "interval", 'i', "SECONDS", "also print the table every SECONDS; with --json one JSON object per interval, its deltas and the totals (JSON Lines)", on_interval, 0 },
	{ CLI_TARGET, "kill-after", 0, "SECONDS", "when the profile ends before the command: SIGTERM it, SIGKILL after SECONDS (default 5)", on_kill_after, 0 },
	{ CLI_TARGET, "leave-running", 0, NULL, "when the profile ends before the command: leave it running", NULL, FLAG(leave_running) },
	{ CLI_PROBING, "event", 'e', "EVENTS", "perf events to count per call, comma-separated; none: on-CPU time only; list: what this machine has", on_events, 0 },
	{ CLI_TARGET, "list-events", 0, NULL, "list the events and whether this machine supports them", NULL, FLAG(list_events) },
	{ CLI_PROFILE | CLI_REPORT, "json", 0, NULL, "print one JSON document instead of the table (docs/json-output.md); the same as --format json", NULL, FLAG(json) },
	{ CLI_LIST, "json", 0, NULL, "print one JSON document instead of the table (docs/list.md)", NULL, FLAG(json) },
	{ CLI_DUMP, "csv", 0, NULL, "the same as --format csv", NULL, FLAG(csv) },
	{ CLI_SELECTING | CLI_REPORT | CLI_DUMP | CLI_EXPORT, "no-demangle", 0, NULL, "print and match C++ and Rust symbols as the library spells them (mangled): --func/--exclude then see only those", NULL, FLAG(no_demangle) },
	{ CLI_PROFILE | CLI_REPORT, "callers", 0, "N", "--by caller's table: under each function its N callers that took the most time (default 5), the rest summed in one row; all: every caller", on_callers, 0 },
	{ CLI_AGENT, "callers", 0, "K", "a caller label on the series: per function the K callers that took the most time as caller=\"module:symbol\", the rest as caller=\"other\"; all: every caller (off by default)", on_callers, 0 },
	{ CLI_PROFILE | CLI_REPORT, "wide", 0, NULL, "the table prints function names whole instead of shortening long ones in the middle", NULL, FLAG(wide) },
	{ CLI_PROFILE | CLI_REPORT | CLI_DUMP | CLI_EXPORT, "format", 0, "NAME", "the output format: one of the formats below (export: perfetto by default)", on_format, 0 },
	{ CLI_EXPORT, "weight", 0, "WHAT", "folded: what a stack weighs: wall (default, ns), oncpu (ns) or a recorded event's name (its count)", on_weight, 0 },
	{ CLI_SELECTING, "attach", 0, "MODE", "auto (default), session (uprobe session links), multi (multi-uprobe links) or classic (one uprobe per function)", on_attach, 0 },
	{ CLI_SELECTING, "unwind", 0, "MODE", "auto (default: where the kernel lets no probe repair the stack for unwinders, libraries exceptions may unwind through are counted at entry only) or unsafe (return probes there too: an exception, pthread_cancel or backtrace() through a probed call may then crash the program)", on_unwind, 0 },
	{ CLI_SELECTING, "max-functions", 0, "N", "probe at most N functions (default 20000): more are refused before anything is attached, since each costs memory, attach and detach time", on_max_functions, 0 },
	{ CLI_SELECTING, "placement", 0, "WHERE", "auto (default: entry probes move to the first instruction the kernel emulates) or entry", on_placement, 0 },
	{ CLI_PROFILE | CLI_MERGE | CLI_REPORT | CLI_EXPORT, "output", 'o', "PATH", "the summary (table or JSON) into the file PATH, replaced whole at the end (never a device, FIFO or symlink); record: the trace directory to write (new or empty); merge: the .dlt file to write; export: the file to write (default: stdout); report: the summary's file", on_output, 0 },
	{ CLI_LIVE | CLI_REPORT, "html", 0, "FILE", "write a self-contained HTML report to FILE (docs/report-html.md); the same as --format html -o FILE", on_html, 0 },
	{ CLI_RECORD, "ringbuf-size", 0, "SIZE", "record: BPF ringbuf size, a power of two with K/M/G (default 16M)", on_ringbuf_size, 0 },
	{ CLI_RECORD, "compress", 0, "MODE", "record: zlib (default) or none", on_compress, 0 },
	{ CLI_MERGE, "compress", 0, "MODE", "none, zlib (default) or zlib:LEVEL (1-9)", on_merge_compress, 0 },
	{ CLI_SELECTING, "verbose", 'v', NULL, "say more (libbpf's messages too with -vv)", on_verbose, 0 },
	{ CLI_AGENT, "listen", 0, "ADDR:PORT", "serve /metrics and /healthz there (default 127.0.0.1:9464)", on_listen, 0 },
	{ CLI_AGENT, "max-overhead", 0, "PCT", "keep the probes' cost under PCT percent of one CPU (default 1) by sampling the costliest functions; off: probe everything always", on_max_overhead, 0 },
	{ CLI_AGENT, "exact", 0, "GLOB", "keep the functions matching GLOB in the links, exact, before any other while the budget allows; repeatable, comma-separated", on_exact, 0 },
	{ CLI_AGENT, "max-series", 0, "N", "at most N label sets of function series; the least active are folded into one (default 2000)", on_max_series, 0 },
	{ CLI_AGENT, "refresh", 0, "SECONDS", "how often the metrics are read and the budget evaluated (default 1)", on_refresh, 0 },
	{ CLI_AGENT, "series-grace", 0, "SECONDS", "keep a removed container's series this long, then drop them (default 300)", on_series_grace, 0 },
	{ CLI_AGENT, "namespace", 0, "GLOB", "only containers of pods in Kubernetes namespaces matching GLOB, pods started later too", on_k8s_namespace, 0 },
	{ CLI_AGENT, "kubelet-url", 0, "URL", "ask this kubelet's /pods for pod names and namespaces (default with --kubelet-token: https://$NODE_NAME:10250)", on_kubelet_url, 0 },
	{ CLI_AGENT, "kubelet-token", 0, "FILE", "bearer token for the kubelet (a service account's token file)", on_kubelet_token, 0 },
	{ CLI_AGENT, "kubelet-ca", 0, "FILE", "CA of the kubelet's certificate, or insecure (default: the system's CAs)", on_kubelet_ca, 0 },
	{ CLI_AGENT, "otlp-endpoint", 0, "URL", "also push the series as OTLP/HTTP metrics to this collector (v1/metrics appended; docs/agent.md)", on_otlp_endpoint, 0 },
	{ CLI_AGENT, "otlp-interval", 0, "SECONDS", "between OTLP pushes (default 60, or OTEL_METRIC_EXPORT_INTERVAL)", on_otlp_interval, 0 },
	{ CLI_AGENT, "pod", 0, "GLOB", "only containers of pods whose name matches GLOB, pods started later too", on_k8s_pod, 0 },
	{ CLI_ALL, "help", 'h', NULL, "show this help", NULL, FLAG(help) },
	{ CLI_PROBING, "version", 'V', NULL, "show the version", NULL, FLAG(version) },
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

unsigned int cli_format_uses(enum cli_cmd cmd)
{
	if (cmd & CLI_EXPORT)
		return EXPORT_USE_TRACE;
	if (cmd & CLI_DUMP)
		return EXPORT_USE_DUMP;
	return EXPORT_USE_SUMMARY;
}

void cli_print_options(FILE *out, enum cli_cmd cmd)
{
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct cli_option *opt = &options[i];
		char shortname[8] = "    ", left[64];

		if (!(opt->cmds & cmd))
			continue;
		if (opt->short_name)
			snprintf(shortname, sizeof(shortname), "-%c, ", opt->short_name);
		snprintf(left, sizeof(left), "%s--%s%s%s", shortname, opt->name,
			 opt->arg_name ? " " : "", opt->arg_name ? opt->arg_name : "");
		fprintf(out, "  %-24s %s\n", left, opt->help);
	}
}

/*
 * getopt's tables for cmd: its own options first, so that a name two
 * commands share ("compress") finds cmd's; the others after, so that using
 * one says which command it belongs to.
 */
static void build_getopt(enum cli_cmd cmd, const struct cli_option **order, struct option *longopts,
			 char *shortopts)
{
	char *start = shortopts;
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < NR_OPTIONS; i++) {
			bool ours = options[i].cmds & cmd;
			bool taken = false;

			if (ours != !pass)
				continue;
			for (size_t k = 0; k < n && !taken; k++)
				taken = !strcmp(order[k]->name, options[i].name);
			if (taken)
				continue;
			order[n] = &options[i];
			longopts[n] = (struct option){ options[i].name,
						       options[i].arg_name ? required_argument : no_argument, NULL,
						       options[i].short_name ? options[i].short_name : 256 + (int)n };
			n++;
		}
	/* '+' (profiling): stop at the first non-option, the command's own arguments are not ours. */
	if (cmd & CLI_TARGET)
		*shortopts++ = '+';
	*shortopts++ = ':';
	*shortopts = '\0';
	for (size_t k = 0; k < n; k++) {
		if (!order[k]->short_name || strchr(start, order[k]->short_name))
			continue;
		*shortopts++ = order[k]->short_name;
		if (order[k]->arg_name)
			*shortopts++ = ':';
		*shortopts = '\0';
	}
	*shortopts = '\0';
}

static int apply_option(const struct cli_option *opt, enum cli_cmd cmd, struct profile_opts *opts,
			char *err, size_t err_sz)
{
	if (!(opt->cmds & cmd))
		return fail(err, err_sz, "--%s belongs to 'dlprof-bpf %s'", opt->name, cli_cmd_name(opt->cmds));
	if (opt->handle)
		return opt->handle(opts, optarg, err, err_sz);
	*(bool *)((char *)opts + opt->flag_off) = true;
	return 0;
}

/* What the profiling commands need together. */
static int check_profile(enum cli_cmd cmd, struct profile_opts *opts, char *err, size_t err_sz)
{
	bool record = cmd == CLI_RECORD;

	if (opts->help || opts->version || opts->list_events)
		return 0;
	if (!opts->libs.cnt)
		return fail(err, err_sz, "no library given: use --lib LIB (a path, a soname like libz.so.1, or a glob)");
	if (opts->nr_pids && opts->command)
		return fail(err, err_sz, "-p and a command exclude each other: profile one or the other");
	if ((opts->cgroups.cnt || opts->containers.cnt) && (opts->nr_pids || opts->command))
		return fail(err, err_sz, "--cgroup and --container exclude -p and a command: profile one kind of target");
	if (opts->cgroups.cnt + opts->containers.cnt > DLPROF_MAX_CGROUPS)
		return fail(err, err_sz, "at most %d cgroups and containers at once", DLPROF_MAX_CGROUPS);
	if (opts->boundary && !opts->nr_pids && !opts->command)
		return fail(err, err_sz, "--boundary needs a command or -p: it probes the functions their modules import");
	if ((opts->kill_after_s || opts->leave_running) && !opts->command)
		return fail(err, err_sz, "--%s applies to a launched command (-- COMMAND)",
			    opts->leave_running ? "leave-running" : "kill-after");
	if (opts->kill_after_s && opts->leave_running)
		return fail(err, err_sz, "--kill-after and --leave-running exclude each other: a command left running is not killed");
	if (!opts->kill_after_s)
		opts->kill_after_s = KILL_AFTER_S_DEFAULT;
	if (record && !opts->output)
		return fail(err, err_sz, "record needs -o DIR, the trace directory to write");
	if (record && !opts->ringbuf_bytes)
		opts->ringbuf_bytes = RINGBUF_BYTES_DEFAULT;
	if (opts->interval_s && (opts->format && !strcmp(opts->format, "html")))
		return fail(err, err_sz, "-i applies to the table and JSON: --html writes one page at the end");
	if (opts->interval_s && opts->json && opts->by)
		return fail(err, err_sz, "-i --json prints per-function deltas; drop -i for the --by rows, or --by for JSON Lines");
	return 0;
}

/* The reading commands: one input, and merge its -o. */
static int check_read(enum cli_cmd cmd, int argc, char **argv, struct profile_opts *opts, char *err,
		      size_t err_sz)
{
	const char *name = cli_cmd_name(cmd);

	if (opts->help)
		return 0;
	if (cmd == CLI_MERGE && (optind != argc - 1 || !opts->output))
		return fail(err, err_sz, "merge needs one input and -o FILE; see 'dlprof-bpf merge --help'");
	if (optind != argc - 1)
		return fail(err, err_sz, "%s needs one trace directory or .dlt file; see 'dlprof-bpf %s --help'",
			    name, name);
	opts->input = argv[optind];
	return 0;
}

/* list: libraries to read, and nothing to run. */
static int check_list(int argc, char **argv, const struct profile_opts *opts, char *err, size_t err_sz)
{
	if (opts->help)
		return 0;
	if (optind < argc)
		return fail(err, err_sz, "list takes no command ('%s'): it only reads the libraries; "
			    "give the process whose libraries to read with -p PID", argv[optind]);
	if (!opts->libs.cnt)
		return fail(err, err_sz, "no library given: use --lib LIB (a path, a soname like libz.so.1, or a glob)");
	return 0;
}

int cli_parse_cmd(enum cli_cmd cmd, int argc, char **argv, struct profile_opts *opts, char *err, size_t err_sz)
{
	const struct cli_option *order[NR_OPTIONS];
	struct option longopts[NR_OPTIONS + 1];
	char shortopts[NR_OPTIONS * 2 + 3];
	int c, ret;

	memset(opts, 0, sizeof(*opts));
	memset(longopts, 0, sizeof(longopts));
	opts->record = cmd == CLI_RECORD;
	opts->comp = TRACE_COMP_ZLIB;
	opts->comp_level = TRACE_ZLIB_LEVEL_DEFAULT;
	build_getopt(cmd, order, longopts, shortopts);

	/* 0, not 1: a full reset, main or an earlier parse may have used getopt. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_option *opt = NULL;

		if (c == '?')
			return fail(err, err_sz, "unknown option '%s' (see --help)", argv[optind - 1]);
		if (c == ':')
			return fail(err, err_sz, "option '%s' needs an argument", argv[optind - 1]);
		for (size_t i = 0; i < NR_OPTIONS && !opt && longopts[i].name; i++)
			if (longopts[i].val == c)
				opt = order[i];
		ret = apply_option(opt, cmd, opts, err, err_sz);
		if (ret)
			return ret;
	}
	/* The aliases name a format; whichever is given, both views agree. */
	if (!opts->format)
		opts->format = cmd == CLI_EXPORT ? "perfetto" : opts->json ? "json" : opts->csv ? "csv" : "text";
	if (!(exporter_find(opts->format)->uses & cli_format_uses(cmd)))
		return fail(err, err_sz, "--format %s does not apply to %s (see 'dlprof-bpf %s --help')%s",
			    opts->format, cli_cmd_name(cmd), cli_cmd_name(cmd),
			    cmd == CLI_EXPORT ? "" : "; dlprof-bpf export writes it");
	if (!strcmp(opts->format, "html") && (opts->json || opts->csv))
		return fail(err, err_sz, "--html and --%s exclude each other: one output format", opts->json ? "json" : "csv");
	if (cmd == CLI_TOP && opts->by && opts->by != ATTR_BY_CALLER)
		return fail(err, err_sz, "top --by: only caller (a key opens each function into its callers); "
			    "the rows per %s go to 'dlprof-bpf live'", attr_by_name(opts->by));
	if (opts->by && opts->by != ATTR_BY_CALLER && !strcmp(opts->format, "html"))
		return fail(err, err_sz, "--html draws one row per function (and --by caller's callers); the --by rows go to the table, --json or --csv");
	if (opts->weight && strcmp(opts->format, "folded"))
		return fail(err, err_sz, "--weight applies to --format folded");
	opts->json = !strcmp(opts->format, "json");
	opts->csv = !strcmp(opts->format, "csv");
	if (cmd & CLI_READ)
		return check_read(cmd, argc, argv, opts, err, err_sz);
	if (cmd & CLI_LIST)
		return check_list(argc, argv, opts, err, err_sz);
	/* The agent takes libraries from its environment too: it checks them itself. */
	if (cmd & CLI_AGENT)
		return optind < argc ? fail(err, err_sz, "agent takes no command ('%s'); profile processes with --container or --cgroup", argv[optind]) : 0;
	/* Whatever follows the options ("--" already consumed) is the command, as with perf. */
	if (optind < argc)
		opts->command = &argv[optind];
	return check_profile(cmd, opts, err, err_sz);
}

void cli_opts_free(struct profile_opts *opts)
{
	if (!opts)
		return;
	str_list_free(&opts->libs);
	str_list_free(&opts->funcs);
	str_list_free(&opts->excludes);
	str_list_free(&opts->exact);
	str_list_free(&opts->cgroups);
	str_list_free(&opts->containers);
}

void cli_selection(const struct profile_opts *opts, struct probe_selection *sel)
{
	*sel = (struct probe_selection){
		.libs = opts->libs,
		.funcs = opts->funcs,
		.excludes = opts->excludes,
		.placement_entry = opts->placement_entry,
		.no_demangle = opts->no_demangle,
		.boundary = opts->boundary,
		.max_functions = opts->max_functions,
	};
}
