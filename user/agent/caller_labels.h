/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's caller label (--callers K): the kernel's rows per
 * (function, caller, container) folded into at most K named callers per
 * function, "module:symbol", and one "other" that sums the rest. The K
 * are the callers that took the most time (all containers together) when
 * the function's places were filled; a named caller keeps its place and
 * "other" never gives calls back, so every series only grows.
 */
#ifndef DLPROF_AGENT_CALLER_LABELS_H
#define DLPROF_AGENT_CALLER_LABELS_H

#include <stddef.h>

#include "model/func_summary.h"

/* The label of the callers that have no place of their own. */
#define CALLER_LABEL_OTHER "other"

struct caller_labels;

/* k: named callers per function at most; < 0: every caller. nr_funcs: the functions' indices are below it. */
struct caller_labels *caller_labels__new(size_t nr_funcs, long k);
void caller_labels__free(struct caller_labels *cl);
/*
 * rows (st: their stats, row for row; fidx: each row's function index,
 * < 0: left out) folded by (function, container, label): *out and
 * *out_st are owned by cl, valid until the next call; their group's
 * caller is the label, caller_module NULL. Rows of calls without a
 * caller (the "(unattributed)" ones) are left out. 0 or -ENOMEM.
 */
int caller_labels__fold(struct caller_labels *cl, const struct func_profile *rows, const struct func_stats *st,
			const long *fidx, size_t n, const struct func_profile **out, const struct func_stats **out_st,
			size_t *out_n);
/*
 * Of n candidates' times, the indices of the (at most) slots largest,
 * largest first, ties to the lower index, into pick. How many. Pure, for tests.
 */
size_t caller_top(const double *time, size_t n, size_t slots, size_t *pick);

#endif /* DLPROF_AGENT_CALLER_LABELS_H */
