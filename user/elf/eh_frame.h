/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The code ranges an .eh_frame section describes: one per FDE, which the
 * compiler emits for each function (and each split-off part, foo.cold) of
 * code built with unwind tables, x86-64's default. A stripped library keeps
 * them, since the unwinder needs them: they tell where functions begin and
 * end where no symbol does.
 */
#ifndef DLPROF_EH_FRAME_H
#define DLPROF_EH_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct fde_range {
	uint64_t begin;		/* first address */
	uint64_t end;		/* one past the last */
};

/*
 * The ranges of the FDEs in data[0..len), an .eh_frame section loaded at
 * vaddr, sorted by begin. Records the reader does not understand (64-bit
 * lengths, pointer encodings other than absolute or pc-relative) are
 * skipped: a range missing only costs the caller precision. Stops at a
 * zero terminator or a record running past the end. Returns 0 (*out may
 * be NULL when there is none; the caller frees it) or -ENOMEM.
 */
int eh_frame_ranges(const uint8_t *data, size_t len, uint64_t vaddr, struct fde_range **out, size_t *cnt);

/* The range that holds addr in ranges[0..cnt) (sorted, as above), or NULL. */
const struct fde_range *fde_range_find(const struct fde_range *ranges, size_t cnt, uint64_t addr);

#endif /* DLPROF_EH_FRAME_H */
