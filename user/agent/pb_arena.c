// SPDX-License-Identifier: GPL-2.0-only
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "agent/pb_arena.h"

/* Large enough that a scrape of thousands of series takes few mallocs. */
#define PB_CHUNK_BYTES (64 * 1024)

struct pb_chunk {
	struct pb_chunk *next;
	size_t used, cap;
	alignas(max_align_t) unsigned char data[];
};

void *pb_alloc(struct pb_arena *a, size_t size)
{
	struct pb_chunk *c = a->chunks;
	size_t need = (size + alignof(max_align_t) - 1) & ~(alignof(max_align_t) - 1);
	void *p;

	if (!c || c->cap - c->used < need) {
		size_t cap = need > PB_CHUNK_BYTES ? need : PB_CHUNK_BYTES;

		c = malloc(sizeof(*c) + cap);
		if (!c) {
			a->failed = true;
			return NULL;
		}
		c->used = 0;
		c->cap = cap;
		c->next = a->chunks;
		a->chunks = c;
	}
	p = c->data + c->used;
	c->used += need;
	memset(p, 0, size);
	return p;
}

char *pb_strdup(struct pb_arena *a, const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = pb_alloc(a, n);

	if (d)
		memcpy(d, s, n);
	return d;
}

void pb_arena_clear(struct pb_arena *a)
{
	while (a->chunks) {
		struct pb_chunk *c = a->chunks;

		a->chunks = c->next;
		free(c);
	}
	a->failed = false;
}
