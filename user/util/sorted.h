/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Binary search in sorted arrays: the one loop, so that no part writes its
 * own (and none gets an off-by-one of its own).
 */
#ifndef DLPROF_UTIL_SORTED_H
#define DLPROF_UTIL_SORTED_H

#include <stddef.h>

/*
 * The number of leading elements of an array of n for which pred, an
 * expression of the index idx, holds; pred must hold for a prefix of the
 * array and for nothing after it. With pred "element idx < key" that is
 * where key goes (the first element not below it); with "element idx <=
 * key", one past the last element at or before key.
 */
#define PARTITION_POINT(n, idx, pred)                                  \
	({                                                             \
		size_t lo__ = 0, hi__ = (n);                           \
		while (lo__ < hi__) {                                  \
			size_t idx = lo__ + (hi__ - lo__) / 2;         \
			if (pred)                                      \
				lo__ = idx + 1;                        \
			else                                           \
				hi__ = idx;                            \
		}                                                      \
		lo__;                                                  \
	})

#endif /* DLPROF_UTIL_SORTED_H */
