// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "model/probe_class.h"

static const char *const class_names[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = "emulated",
	[DLPROF_PROBE_STEPPED] = "single_stepped",
};

const char *probe_class_name(enum dlprof_probe_class c)
{
	return (unsigned int)c < DLPROF_PROBE_CLASSES ? class_names[c] : "unknown";
}

int probe_class_from_name(const char *name)
{
	for (int c = 0; c < DLPROF_PROBE_CLASSES; c++)
		if (!strcmp(name, class_names[c]))
			return c;
	return -1;
}

static const char *const why_names[] = {
	[ENTRY_ONLY_NO] = "",
	[ENTRY_ONLY_RETURN_ADDRESS] = "return-address",
	[ENTRY_ONLY_UNWINDING] = "unwinding",
};

#define NR_WHYS (sizeof(why_names) / sizeof(why_names[0]))

const char *entry_only_why_name(enum entry_only_why why)
{
	return (size_t)why < NR_WHYS ? why_names[why] : "";
}

int entry_only_why_from_name(const char *name)
{
	for (size_t w = 0; w < NR_WHYS; w++)
		if (!strcmp(name, why_names[w]))
			return (int)w;
	return -1;
}
