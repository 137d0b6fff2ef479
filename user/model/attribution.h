/* SPDX-License-Identifier: GPL-2.0-only */
/* What a row of a profile is attributed to (--by): plain data every part shares. */
#ifndef DLPROF_MODEL_ATTRIBUTION_H
#define DLPROF_MODEL_ATTRIBUTION_H

#include <stdbool.h>
#include <stdint.h>

enum attr_by {
	ATTR_BY_FUNCTION = 0,	/* one row per function (the default) */
	ATTR_BY_PROCESS,	/* per function and process (tgid) */
	ATTR_BY_CONTAINER,	/* per function and container (its cgroups merged; the host's processes in one row) */
	ATTR_BY_CGROUP,		/* per function and cgroup v2 */
	ATTR_BY_CALLER,		/* per function and calling function (docs/callers.md) */
	ATTR_BY_CALLER_PROCESS,	/* per function, calling function and process ("caller,process") */
};

/* The group of a row; fields that do not apply to its enum attr_by are 0/NULL. */
struct attr_group {
	uint32_t pid;			/* process: the tgid */
	const char *comm;		/* process: its name; NULL: unknown */
	uint64_t cgroup_id;		/* cgroup; process: its cgroup at first sight; 0: unknown */
	const char *cgroup;		/* cgroup, container: the path under the cgroup2 mount; NULL: unknown */
	const char *container_id;	/* cgroup, container: the full id; NULL: not in a container */
	const char *container;		/* its name where the runtime's metadata says, else the short id */
	const char *caller;		/* caller: the calling function, or "+0x<offset>" in caller_module */
	const char *caller_module;	/* caller: the file holding the call (base name); "?": unknown */
};

/* Whether by's rows are split by caller (caller, caller,process). */
bool attr_by_has_caller(enum attr_by by);
/* Whether by's rows are one process's (process, caller,process): pid and comm apply. */
bool attr_by_has_process(enum attr_by by);

/* "function", "process", ... for by; NULL when out of range. */
const char *attr_by_name(enum attr_by by);
/* The enum attr_by of a --by name, or -1. */
int attr_by_parse(const char *name);
/* The --by names, comma-separated, for messages. */
const char *attr_by_names(void);

#endif /* DLPROF_MODEL_ATTRIBUTION_H */
