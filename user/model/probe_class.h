/* SPDX-License-Identifier: GPL-2.0-only */
/* The classes of probed instruction (include/dlprof.h) by the names outputs give them. */
#ifndef DLPROF_PROBE_CLASS_H
#define DLPROF_PROBE_CLASS_H

#include "dlprof.h"

/* "emulated", "single_stepped": JSON keys and metric labels. */
const char *probe_class_name(enum dlprof_probe_class c);

#endif /* DLPROF_PROBE_CLASS_H */
