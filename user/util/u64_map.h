/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A map from 64-bit keys to indexes (open addressing, linear probing), for
 * the parts that number what they meet (threads, stacks) in arrays of their own.
 */
#ifndef DLPROF_UTIL_U64_MAP_H
#define DLPROF_UTIL_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64_map {
	uint64_t *keys;
	size_t *vals;			/* index + 1; 0: the slot is free */
	size_t cap;			/* a power of two, or 0 */
	size_t cnt;
};

/* The index stored for key: 0 and *val, or -ENOENT. */
int u64_map_get(const struct u64_map *m, uint64_t key, size_t *val);
/* Stores val for key (replacing any). 0 or -ENOMEM (the map as it was). */
int u64_map_put(struct u64_map *m, uint64_t key, size_t val);
void u64_map_free(struct u64_map *m);

#endif /* DLPROF_UTIL_U64_MAP_H */
