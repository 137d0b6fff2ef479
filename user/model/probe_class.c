// SPDX-License-Identifier: GPL-2.0-only
#include "model/probe_class.h"

static const char *const class_names[DLPROF_PROBE_CLASSES] = {
	[DLPROF_PROBE_EMULATED] = "emulated",
	[DLPROF_PROBE_STEPPED] = "single_stepped",
};

const char *probe_class_name(enum dlprof_probe_class c)
{
	return (unsigned int)c < DLPROF_PROBE_CLASSES ? class_names[c] : "unknown";
}
