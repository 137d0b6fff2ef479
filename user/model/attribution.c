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
	return -1;
}

const char *attr_by_names(void)
{
	return "function, process, container, cgroup, caller";
}
