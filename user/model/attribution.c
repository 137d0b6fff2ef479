// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "model/attribution.h"

/* --by's names, in enum attr_by order. */
static const char *const by_names[] = {
	[ATTR_BY_FUNCTION] = "function",
	[ATTR_BY_PROCESS] = "process",
	[ATTR_BY_CONTAINER] = "container",
	[ATTR_BY_CGROUP] = "cgroup",
	[ATTR_BY_CALLER] = "caller",
	[ATTR_BY_CALLER_PROCESS] = "caller,process",
};

#define NR_BY (sizeof(by_names) / sizeof(by_names[0]))

const char *attr_by_name(enum attr_by by)
{
	return (unsigned int)by < NR_BY ? by_names[by] : NULL;
}

int attr_by_parse(const char *name)
{
	for (size_t i = 0; i < NR_BY; i++)
		if (!strcmp(name, by_names[i]))
			return (int)i;
	/* A combination's keys in either order. */
	if (!strcmp(name, "process,caller"))
		return ATTR_BY_CALLER_PROCESS;
	return -1;
}

const char *attr_by_names(void)
{
	return "function, process, container, cgroup, caller, caller,process";
}

bool attr_by_has_caller(enum attr_by by)
{
	return by == ATTR_BY_CALLER || by == ATTR_BY_CALLER_PROCESS;
}

bool attr_by_has_process(enum attr_by by)
{
	return by == ATTR_BY_PROCESS || by == ATTR_BY_CALLER_PROCESS;
}
