// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "util/u64_map.h"

/* splitmix64's finalizer: pids and tids differ in their low bits only. */
static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 30;
	key *= 0xbf58476d1ce4e5b9ull;
	key ^= key >> 27;
	key *= 0x94d049bb133111ebull;
	key ^= key >> 31;
	return (size_t)key & (cap - 1);
}

static size_t find(const struct u64_map *m, uint64_t key)
{
	size_t i = slot_of(key, m->cap);

	while (m->vals[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

int u64_map_get(const struct u64_map *m, uint64_t key, size_t *val)
{
	size_t i;

	if (!m->cap)
		return -ENOENT;
	i = find(m, key);
	if (!m->vals[i])
		return -ENOENT;
	*val = m->vals[i] - 1;
	return 0;
}

/* Twice the room, every entry moved: keeps the load under a half. */
static int grow(struct u64_map *m)
{
	struct u64_map n = { .cap = m->cap ? m->cap * 2 : 64, .cnt = m->cnt };

	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		u64_map_free(&n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = find(&n, m->keys[i]);
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	u64_map_free(m);
	*m = n;
	return 0;
}

int u64_map_put(struct u64_map *m, uint64_t key, size_t val)
{
	size_t i;

	if ((m->cnt + 1) * 2 > m->cap && grow(m))
		return -ENOMEM;
	i = find(m, key);
	if (!m->vals[i])
		m->cnt++;
	m->keys[i] = key;
	m->vals[i] = val + 1;
	return 0;
}

void u64_map_free(struct u64_map *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->vals);
	*m = (struct u64_map){ 0 };
}
