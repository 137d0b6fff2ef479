// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "cmd/cmd_agent.h"
#include "cmd/cmd_list.h"
#include "cmd/commands.h"
#include "cmd/cmd_top.h"
#include "cmd/live.h"
#include "cmd/trace_cmds.h"
#include "output/exporter.h"
#include "util/messages.h"

struct command {
	const char *name;
	enum cli_cmd id;
	int (*run)(int argc, char **argv);	/* the exit status, or CMD_HELP */
	const char *usage;	/* after "dlprof-bpf " */
	const char *help;
};

/* Every mode; anything else on the command line is the live mode's options. */
static const struct command commands[] = {
	{ "live", CLI_LIVE, cmd_live, "[live] --lib LIB [options] [-p PID,... | --cgroup PATH | --container ID | -- COMMAND [ARGS...]]",
	  "profile and print a summary table (the default)" },
	{ "record", CLI_RECORD, cmd_record, "record -o DIR --lib LIB [options] [-p PID,... | --cgroup PATH | --container ID | -- COMMAND [ARGS...]]",
	  "profile like live and write every call to a trace directory (docs/trace-format.md)" },
	{ "top", CLI_TOP, cmd_top, "top --lib LIB [options] [-p PID,... | --cgroup PATH | --container ID | -- COMMAND [ARGS...]]",
	  "profile like live, shown full-screen and refreshed every second (docs/top.md)" },
	{ "merge", CLI_MERGE, cmd_merge, "merge DIR|FILE.dlt -o FILE.dlt [--compress=none|zlib|zlib:LEVEL]",
	  "merge a trace directory into one .dlt file ordered by time" },
	{ "report", CLI_REPORT, cmd_report, "report DIR|FILE.dlt [--json | --html FILE]",
	  "the summary table of a recorded trace, or its HTML report (docs/report-html.md)" },
	{ "dump", CLI_DUMP, cmd_dump, "dump DIR|FILE.dlt [--csv]",
	  "one line per recorded call, in time order (--csv)" },
	{ "export", CLI_EXPORT, cmd_export, "export DIR|FILE.dlt [--format perfetto|folded] [--weight WHAT] [-o FILE]",
	  "a recorded trace for other tools: Perfetto's timeline, flame graphs" },
	{ "list", CLI_LIST, cmd_list, "list --lib LIB [--func GLOB] [--exclude GLOB] [-p PID] [--placement auto|entry] [--unwind auto|unsafe] [--attach MODE] [--no-demangle] [--json]",
	  "each function's probe class (emulated, single-stepped, entry-only) and what its probes cost (docs/list.md)" },
	{ "agent", CLI_AGENT, cmd_agent, "agent --lib LIB [--lib LIB2 ...] [--func GLOB] [--exclude GLOB] [--container ID] [--cgroup PATH] [--listen ADDR:PORT] [--max-overhead PCT] [--exact GLOB] [--max-series N]",
	  "run as a node agent: Prometheus /metrics and /healthz, an overhead budget (docs/agent.md)" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *cli_cmd_name(enum cli_cmd cmd)
{
	unsigned int lowest = (unsigned int)cmd & -(unsigned int)cmd;

	for (size_t i = 0; i < NR_COMMANDS; i++)
		if ((unsigned int)commands[i].id == lowest)
			return commands[i].name;
	return "?";
}

static const struct command *command_of(enum cli_cmd id)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (commands[i].id == id)
			return &commands[i];
	return &commands[0];
}

/*
 * A command's help: its usage, its options from the option table; the live
 * mode's (the top-level help) also lists the commands.
 */
static void print_help(FILE *out, enum cli_cmd id)
{
	const struct command *c = command_of(id);

	fprintf(out, "Usage: dlprof-bpf %s\n", c->usage);
	if (id == CLI_LIVE) {
		fprintf(out, "       dlprof-bpf COMMAND [options]  (dlprof-bpf COMMAND --help)\n"
			"Count and time the calls of a shared library's functions with uprobes.\n"
			"Without a target (-p, --cgroup, --container, a command), every process that uses\nthe library is profiled.\n\n"
			"Commands:\n");
		for (size_t i = 0; i < NR_COMMANDS; i++)
			fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
	} else {
		fprintf(out, "%c%s.\n", c->help[0] - 'a' + 'A', c->help + 1);
	}
	fprintf(out, "\nOptions:\n");
	cli_print_options(out, id);
	if (id & (CLI_PROFILE | CLI_REPORT | CLI_DUMP | CLI_EXPORT)) {
		size_t n;
		const struct exporter *e = exporter_table(&n);

		fprintf(out, "\nFormats (--format):\n");
		for (size_t i = 0; i < n; i++)
			if (e[i].uses & cli_format_uses(id))
				fprintf(out, "  %-8s %s\n", e[i].name, e[i].help);
	}
}

/* Edits (insert, delete, substitute, swap two neighbours) that turn a into b, up to 3. */
static int edits(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	int d[16][16];

	if (n > 14 || m > 14)
		return 3;
	for (size_t i = 0; i <= n; i++)
		for (size_t j = 0; j <= m; j++) {
			int best = i == 0 ? (int)j : j == 0 ? (int)i : d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (i && j) {
				best = best < d[i - 1][j] + 1 ? best : d[i - 1][j] + 1;
				best = best < d[i][j - 1] + 1 ? best : d[i][j - 1] + 1;
				if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
				    d[i - 2][j - 2] + 1 < best)
					best = d[i - 2][j - 2] + 1;
			}
			d[i][j] = best;
		}
	return d[n][m] < 3 ? d[n][m] : 3;
}

/* A first word that is no option and no command: a mistyped command, never the live mode's. */
static int unknown_command(const char *word)
{
	const struct command *near = NULL;

	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (edits(word, commands[i].name) <= 2 && (!near || edits(word, commands[i].name) < edits(word, near->name)))
			near = &commands[i];
	if (near)
		errmsg("unknown command '%s': did you mean '%s'? (dlprof-bpf --help lists the commands)", word,
		       near->name);
	else
		errmsg("unknown command '%s' (dlprof-bpf --help lists the commands)", word);
	return EXIT_USAGE;
}

/* c's exit status; its help when its options asked for it. */
static int run_command(const struct command *c, int argc, char **argv)
{
	int status = c->run(argc, argv);

	if (status != CMD_HELP)
		return status;
	print_help(stdout, c->id);
	return 0;
}

int commands_main(int argc, char **argv)
{
	if (argc < 2)
		return run_command(command_of(CLI_LIVE), argc, argv);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return run_command(&commands[i], argc - 1, argv + 1);
	if (argv[1][0] != '-')
		return unknown_command(argv[1]);
	return run_command(command_of(CLI_LIVE), argc, argv);
}
