/* SPDX-License-Identifier: GPL-2.0-only */
/* The classes of probed instruction (include/dlprof.h) by the names outputs give them. */
#ifndef DLPROF_PROBE_CLASS_H
#define DLPROF_PROBE_CLASS_H

#include "dlprof.h"
#include "model/func_summary.h"

/* "emulated", "single_stepped": JSON keys and metric labels. */
const char *probe_class_name(enum dlprof_probe_class c);
/* The class a name gives back; -1: no class's. */
int probe_class_from_name(const char *name);
/* Why a function is probed at entry only, as JSON and a trace's metadata name it: "return-address", "unwinding"; "" for ENTRY_ONLY_NO. */
const char *entry_only_why_name(enum entry_only_why why);
/* The reason a name gives back (ENTRY_ONLY_NO for ""); -1: no reason's. */
int entry_only_why_from_name(const char *name);

#endif /* DLPROF_PROBE_CLASS_H */
