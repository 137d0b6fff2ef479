/* SPDX-License-Identifier: GPL-2.0-only */
/* Where a copy of a library takes the probes of the probe table's library of that name. */
#ifndef DLPROF_COPY_FUNCS_H
#define DLPROF_COPY_FUNCS_H

#include <stddef.h>
#include <stdint.h>

#include "probe/probe_table.h"

struct copy_funcs {
	uint64_t *offsets;	/* in the copy's file */
	uint64_t *cookies;	/* the primary's: the same function ids */
	size_t cnt;
	size_t missing;		/* the primary's functions the copy lacks (or only as an IFUNC resolver) */
};

/*
 * The functions of t's library lib at their places in the ELF file at
 * path. The same build (GNU build id): the primary's offsets, placement
 * included. Another build: each function by name at its symbol's entry
 * (the placement was judged on the primary's code); IFUNCs are left out,
 * their implementation was found for the primary only, and the functions
 * timed only because the primary's code shows no unwinder can cross them
 * (unwind_safety.h) are counted at entry only. 0 or -errno (the
 * file is not readable ELF); out is the caller's to free either way.
 */
int copy_funcs__map(const struct probe_table *t, size_t lib, const char *path, struct copy_funcs *out);
void copy_funcs__free(struct copy_funcs *m);

#endif /* DLPROF_COPY_FUNCS_H */
