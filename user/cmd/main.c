// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>

#include "cmd/live.h"
#include "cmd/trace_cmds.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

/* Every mode; anything else on the command line is the live mode's options. */
static const struct command commands[] = {
	{ "live", cmd_live, "profile and print a summary table (the default)" },
	{ "record", cmd_record, "profile like live and write every call to a trace directory" },
	{ "merge", cmd_merge, "merge a trace directory into one .dlt file ordered by time" },
	{ "report", cmd_report, "the summary table of a recorded trace" },
	{ "dump", cmd_dump, "one line per recorded call, in time order (--csv)" },
};

int main(int argc, char **argv)
{
	if (argc > 1)
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[1], commands[i].name))
				return commands[i].run(argc - 1, argv + 1);
	return cmd_live(argc, argv);
}
