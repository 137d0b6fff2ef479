/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Growable arrays: the one realloc-append, so that no part writes its own
 * (and none forgets the failed-realloc case, which keeps the old block).
 */
#ifndef DLPROF_UTIL_ARRAY_H
#define DLPROF_UTIL_ARRAY_H

#include <stddef.h>

/*
 * Room in *arr for need elements of elem bytes, *cap counting what it holds
 * (doubling, so n appends cost O(n)). 0, or -ENOMEM with *arr and *cap as
 * they were.
 */
int array_reserve(void **arr, size_t *cap, size_t need, size_t elem);

/*
 * Room for element cnt, one past the last, in an array that keeps no
 * capacity: the slot's address, zeroed, or NULL (ENOMEM; *arr as it was).
 * The caller counts the slot in once it has filled it.
 */
void *array_slot(void **arr, size_t cnt, size_t elem);

#define ARRAY_RESERVE(arr, cap, need) array_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr)))
#define ARRAY_SLOT(arr, cnt) ((__typeof__(&*(arr)))array_slot((void **)&(arr), (cnt), sizeof(*(arr))))

#endif /* DLPROF_UTIL_ARRAY_H */
