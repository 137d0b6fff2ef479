/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What `dlprof-bpf list` prints (docs/list.md): the probe class of each
 * selected function, the counts per class, and what a probe pair of each
 * class costs on this machine. Pure: the command fills the rows.
 */
#ifndef DLPROF_FUNC_CLASSES_H
#define DLPROF_FUNC_CLASSES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dlprof.h"
#include "model/func_summary.h"

enum func_class {
	FUNC_CLASS_EMULATED,		/* entry and return probes; the kernel emulates the probed instruction */
	FUNC_CLASS_STEPPED,		/* entry and return probes; the probed instruction is single-stepped */
	FUNC_CLASS_ENTRY_ONLY,		/* an entry probe only: counted, never timed */
	FUNC_CLASS_UNPROBEABLE,		/* left out */
	FUNC_CLASSES,
};

/* Why a selected function is left out. */
enum unprobeable_why {
	UNPROBEABLE_NO = 0,
	UNPROBEABLE_NO_PLACE,		/* no instruction near its entry can take a uprobe */
	UNPROBEABLE_IFUNC,		/* an IFUNC whose implementation is not inside the library */
};

struct class_row {
	const char *lib;		/* the library's path */
	const char *func;		/* demangled where it demangles */
	const char *mangled;		/* the symbol when func is its demangled form; NULL otherwise */
	bool stepped;			/* the entry probe's instruction is single-stepped (entry-only ones too) */
	uint32_t moved;			/* bytes the probes sit past the entry; 0: at the entry */
	enum entry_only_why entry_only;
	enum unprobeable_why unprobeable;
};

/* The calibration, or why there is none. */
struct class_costs {
	bool measured;
	const char *attach_mode;	/* the profile's, whose programs were timed */
	uint64_t pair_ns[DLPROF_PROBE_CLASSES];		/* medians */
	uint64_t pair_least_ns[DLPROF_PROBE_CLASSES];
	const char *why_not;		/* !measured: one sentence */
};

enum func_class class_of(const struct class_row *r);
/* By library, then name. */
void class_rows_sort(struct class_row *rows, size_t n);
/* The row's WHERE/WHY column: "at the entry", "moved 4 bytes past the entry", why it is entry-only... */
void class_detail(char *buf, size_t sz, const struct class_row *r);
/* "# 88 functions: 85 emulated (54 moved past the entry), 3 single-stepped, ..." without "# ". */
void class_counts_line(char *buf, size_t sz, const struct class_row *rows, size_t n);
/* What a pair costs per class, or why that is not known; without "# ". */
void class_costs_line(char *buf, size_t sz, const struct class_costs *c, bool entry_only);
void class_list_print(FILE *out, const struct class_row *rows, size_t n, const struct class_costs *c);
/* One JSON document (docs/list.md); 0 or -ENOMEM. */
int class_list_print_json(FILE *out, const struct class_row *rows, size_t n, const struct class_costs *c);

#endif /* DLPROF_FUNC_CLASSES_H */
