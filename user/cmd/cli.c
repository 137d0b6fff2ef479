// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "probe/attach.h"
#include "cmd/cli.h"

typedef int (*opt_handler)(struct profile_opts *o, const char *arg, char *err, size_t err_sz);

struct cli_option {
	bool record_only;
	const char *name;
	char short_name;	/* 0: long only */
	const char *arg_name;	/* NULL: a flag */
	const char *help;
	opt_handler handle;
};

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
	return push_split(&o->funcs, arg, "func", err, err_sz);
}

static int on_exclude(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	return push_split(&o->excludes, arg, "exclude", err, err_sz);
}

static int on_pid(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
		return fail(err, err_sz, "-p: '%s' is not a process id", arg);
	if (o->pid)
		return fail(err, err_sz, "-p given twice: one process at a time");
	o->pid = (pid_t)v;
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

static int on_leave_running(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->leave_running = true;
	return 0;
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

static int on_list_events(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->list_events = true;
	return 0;
}

static int on_json(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->json = true;
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

static int on_help(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->help = true;
	return 0;
}

static int on_version(struct profile_opts *o, const char *arg, char *err, size_t err_sz)
{
	(void)arg; (void)err; (void)err_sz;
	o->version = true;
	return 0;
}

static const struct cli_option options[] = {
	{ false, "lib", 'l', "LIB", "library to profile: path, soname or glob (libssl.so*); repeatable", on_lib },
	{ false, "func", 'f', "GLOB", "only functions matching GLOB; repeatable, comma-separated", on_func },
	{ false, "exclude", 'x', "GLOB", "leave out functions matching GLOB; repeatable", on_exclude },
	{ false, "pid", 'p', "PID", "profile the running process PID (all its threads)", on_pid },
	{ false, "duration", 'd', "SECONDS", "stop after SECONDS", on_duration },
	{ false, "interval", 'i', "SECONDS", "also print the table every SECONDS", on_interval },
	{ false, "kill-after", 0, "SECONDS", "when the profile ends before the command: SIGTERM it, SIGKILL after SECONDS (default 5)", on_kill_after },
	{ false, "leave-running", 0, NULL, "when the profile ends before the command: leave it running", on_leave_running },
	{ false, "event", 'e', "EVENTS", "perf events to count per call, comma-separated; none: on-CPU time only; list: what this machine has", on_events },
	{ false, "list-events", 0, NULL, "list the events and whether this machine supports them", on_list_events },
	{ false, "json", 0, NULL, "print one JSON document instead of the table (docs/json-output.md)", on_json },
	{ false, "attach", 0, "MODE", "auto (default), session (uprobe session links), multi (multi-uprobe links) or classic (one uprobe per function)", on_attach },
	{ false, "unwind", 0, "MODE", "auto (default: where the kernel lets no probe repair the stack for unwinders, libraries exceptions may unwind through are counted at entry only) or unsafe (return probes there too: an exception, pthread_cancel or backtrace() through a probed call may then crash the program)", on_unwind },
	{ false, "placement", 0, "WHERE", "auto (default: entry probes move to the first instruction the kernel emulates) or entry", on_placement },
	{ false, "output", 'o', "PATH", "the summary (table or JSON) into the file PATH, replaced whole at the end (never a device, FIFO or symlink); record: the trace directory to write (new or empty)", on_output },
	{ true, "ringbuf-size", 0, "SIZE", "record: BPF ringbuf size, a power of two with K/M/G (default 16M)", on_ringbuf_size },
	{ true, "compress", 0, "MODE", "record: zlib (default) or none", on_compress },
	{ false, "verbose", 'v', NULL, "say more (libbpf's messages too with -vv)", on_verbose },
	{ false, "help", 'h', NULL, "show this help", on_help },
	{ false, "version", 'V', NULL, "show the version", on_version },
};

#define NR_OPTIONS (sizeof(options) / sizeof(options[0]))

void cli_print_help(FILE *out, bool record)
{
	if (record)
		fprintf(out,
			"Usage: dlprof-bpf record -o DIR --lib LIB [options] [-p PID | -- COMMAND [ARGS...]]\n"
			"Profile like the live mode and also write every call to a trace directory\n"
			"(docs/trace-format.md); then: dlprof-bpf merge|report|dump DIR.\n\n");
	else
		fprintf(out,
			"Usage: dlprof-bpf --lib LIB [options] [-p PID | -- COMMAND [ARGS...]]\n"
			"       dlprof-bpf record -o DIR ...      also write a trace of every call\n"
			"       dlprof-bpf merge|report|dump ...  read a trace\n"
			"Count and time the calls of a shared library's functions with uprobes.\n"
			"Without -p or a command, every process that uses the library is profiled.\n\n");
	fprintf(out, "Options:\n");
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		const struct cli_option *opt = &options[i];

		if (opt->record_only && !record)
			continue;
		char shortname[8] = "    ", left[64];

		if (opt->short_name)
			snprintf(shortname, sizeof(shortname), "-%c, ", opt->short_name);
		snprintf(left, sizeof(left), "%s--%s%s%s", shortname, opt->name,
			 opt->arg_name ? " " : "", opt->arg_name ? opt->arg_name : "");
		fprintf(out, "  %-24s %s\n", left, opt->help);
	}
}

int cli_parse(int argc, char **argv, bool record, struct profile_opts *opts, char *err, size_t err_sz)
{
	struct option longopts[NR_OPTIONS + 1];
	char shortopts[NR_OPTIONS * 2 + 2], *s = shortopts;
	int c, ret;

	memset(opts, 0, sizeof(*opts));
	memset(longopts, 0, sizeof(longopts));
	opts->record = record;
	/* '+': stop at the first non-option, the command's own arguments are not ours. */
	*s++ = '+';
	*s++ = ':';
	for (size_t i = 0; i < NR_OPTIONS; i++) {
		longopts[i].name = options[i].name;
		longopts[i].has_arg = options[i].arg_name ? required_argument : no_argument;
		longopts[i].val = options[i].short_name ? options[i].short_name : 256 + (int)i;
		if (options[i].short_name) {
			*s++ = options[i].short_name;
			if (options[i].arg_name)
				*s++ = ':';
		}
	}
	*s = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct cli_option *opt = NULL;

		if (c == '?')
			return fail(err, err_sz, "unknown option '%s' (see --help)", argv[optind - 1]);
		if (c == ':')
			return fail(err, err_sz, "option '%s' needs an argument", argv[optind - 1]);
		for (size_t i = 0; i < NR_OPTIONS && !opt; i++)
			if (longopts[i].val == c)
				opt = &options[i];
		if (opt->record_only && !record)
			return fail(err, err_sz, "--%s belongs to 'dlprof-bpf record'", opt->name);
		ret = opt->handle(opts, optarg, err, err_sz);
		if (ret)
			return ret;
	}
	/* Whatever follows the options ("--" already consumed) is the command, as with perf. */
	if (optind < argc)
		opts->command = &argv[optind];
	if (opts->help || opts->version || opts->list_events)
		return 0;
	if (!opts->libs.cnt)
		return fail(err, err_sz, "no library given: use --lib LIB (a path, a soname like libz.so.1, or a glob)");
	if (opts->pid && opts->command)
		return fail(err, err_sz, "-p and a command exclude each other: profile one or the other");
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
	if (opts->interval_s && opts->json)
		return fail(err, err_sz, "-i and --json exclude each other: --json prints one document at the end");
	return 0;
}

void cli_opts_free(struct profile_opts *opts)
{
	if (!opts)
		return;
	str_list_free(&opts->libs);
	str_list_free(&opts->funcs);
	str_list_free(&opts->excludes);
}

void cli_selection(const struct profile_opts *opts, struct probe_selection *sel)
{
	*sel = (struct probe_selection){
		.libs = opts->libs,
		.funcs = opts->funcs,
		.excludes = opts->excludes,
		.placement_entry = opts->placement_entry,
	};
}
