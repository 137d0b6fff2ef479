/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A binary min-heap of (key, val) pairs, ordered by key then val, so equal
 * timestamps come out in a fixed order. Header-only: it sits on the hot path
 * of the writer's reorder window and of the merge.
 */
#ifndef DLPROF_TRACE_HEAP_H
#define DLPROF_TRACE_HEAP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct heap_ent {
	uint64_t key;
	uint64_t val;
};

struct trace_heap {
	struct heap_ent *e;
	size_t n;
	size_t cap;
};

static inline bool heap_less(const struct heap_ent *a, const struct heap_ent *b)
{
	return a->key < b->key || (a->key == b->key && a->val < b->val);
}

static inline void heap_sift_down(struct trace_heap *h, size_t i)
{
	struct heap_ent x = h->e[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && heap_less(&h->e[c + 1], &h->e[c]))
			c++;
		if (!heap_less(&h->e[c], &x))
			break;
		h->e[i] = h->e[c];
		i = c;
	}
	h->e[i] = x;
}

static inline int heap_reserve(struct trace_heap *h, size_t cap)
{
	struct heap_ent *e;

	if (cap <= h->cap)
		return 0;
	e = realloc(h->e, cap * sizeof(*e));
	if (!e)
		return -ENOMEM;
	h->e = e;
	h->cap = cap;
	return 0;
}

static inline int heap_push(struct trace_heap *h, uint64_t key, uint64_t val)
{
	struct heap_ent x = { key, val };
	size_t i;

	if (h->n == h->cap && heap_reserve(h, h->cap ? 2 * h->cap : 16))
		return -ENOMEM;
	i = h->n++;
	while (i) {
		size_t p = (i - 1) / 2;

		if (!heap_less(&x, &h->e[p]))
			break;
		h->e[i] = h->e[p];
		i = p;
	}
	h->e[i] = x;
	return 0;
}

/* The smallest entry; the heap must not be empty. */
static inline const struct heap_ent *heap_top(const struct trace_heap *h)
{
	return &h->e[0];
}

static inline struct heap_ent heap_pop(struct trace_heap *h)
{
	struct heap_ent top = h->e[0];

	h->e[0] = h->e[--h->n];
	if (h->n)
		heap_sift_down(h, 0);
	return top;
}

/* Pop and push in one sift: the merge's common step. */
static inline void heap_replace_top(struct trace_heap *h, uint64_t key, uint64_t val)
{
	h->e[0].key = key;
	h->e[0].val = val;
	heap_sift_down(h, 0);
}

static inline void heap_free(struct trace_heap *h)
{
	free(h->e);
	h->e = NULL;
	h->n = h->cap = 0;
}

#endif /* DLPROF_TRACE_HEAP_H */
