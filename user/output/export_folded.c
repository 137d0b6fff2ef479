// SPDX-License-Identifier: GPL-2.0-only
/*
 * Folded stacks ("proc;thread;outer;inner N", what flamegraph.pl and
 * speedscope read; "proc;thread;caller;outer;inner N" for a trace recorded
 * --by caller): each thread's nesting rebuilt from the calls' depth and
 * entry time, each stack's self weight summed over its calls. Kept: one
 * entry per distinct stack and the open frames of each thread, never the
 * calls. docs/export-folded.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "dlprof.h"
#include "output/export_formats.h"
#include "util/array.h"
#include "util/u64_map.h"

/* One distinct stack: its text and its self weight so far (children's already taken off). */
struct stack {
	char *key;
	size_t len;
	int64_t self;
	size_t next;			/* the next stack with the same hash; SIZE_MAX: none */
};

struct frame {
	uint64_t end_ns;		/* entry + duration: what returns later is not inside */
	uint32_t depth;
	size_t stack;
};

struct thread {
	size_t root;			/* the stack "proc;thread" */
	uint32_t nr_frames;
	struct frame frames[DLPROF_MAX_DEPTH];
};

struct export_state {
	struct stack *stacks;
	size_t nr_stacks;
	struct u64_map by_hash;		/* FNV-1a of the key -> first stack of that hash */
	struct thread **threads;
	size_t nr_threads;
	struct u64_map by_tid;		/* pid << 32 | tid -> thread */
	char *scratch;			/* the key being looked up */
	size_t scratch_cap;
	int err;
};

static uint64_t fnv1a(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The stack whose key is s[0..len), added (self 0) when new: its index, or -ENOMEM. */
static long long stack_of(struct export_state *st, const char *s, size_t len)
{
	uint64_t h = fnv1a(s, len);
	size_t first = SIZE_MAX, i;
	struct stack *n;

	if (!u64_map_get(&st->by_hash, h, &first))
		for (i = first; i != SIZE_MAX; i = st->stacks[i].next)
			if (st->stacks[i].len == len && !memcmp(st->stacks[i].key, s, len))
				return (long long)i;
	n = ARRAY_SLOT(st->stacks, st->nr_stacks);
	if (!n || !(n->key = malloc(len + 1)))
		return -ENOMEM;
	memcpy(n->key, s, len);
	n->key[len] = 0;
	n->len = len;
	n->next = first;
	if (u64_map_put(&st->by_hash, h, st->nr_stacks)) {
		free(n->key);
		return -ENOMEM;
	}
	return (long long)st->nr_stacks++;
}

/* Appends name to the scratch key, ';' and the line's last space kept out of it. */
static int scratch_add(struct export_state *st, size_t *len, const char *name)
{
	size_t n = strlen(name);

	if (ARRAY_RESERVE(st->scratch, st->scratch_cap, *len + n + 2))
		return -ENOMEM;
	if (*len)
		st->scratch[(*len)++] = ';';
	for (size_t i = 0; i < n; i++)
		st->scratch[(*len)++] = name[i] == ';' || name[i] == '\n' || name[i] == ' ' ? '_' : name[i];
	return 0;
}

/* A thread met for the first time: its root stack "comm-pid;tid". */
static struct thread *thread_new(struct export_state *st, const struct export_head *h, uint32_t pid, uint32_t tid)
{
	const char *comm = export_comm(h, pid);
	struct thread *t = calloc(1, sizeof(*t)), **slot;
	char name[64];
	size_t len = 0;
	long long root;

	snprintf(name, sizeof(name), "%.40s%s%u", comm ? comm : "", comm ? "-" : "", pid);
	if (!t || scratch_add(st, &len, name))
		goto fail;
	snprintf(name, sizeof(name), "%u", tid);
	if (scratch_add(st, &len, name) || (root = stack_of(st, st->scratch, len)) < 0)
		goto fail;
	t->root = (size_t)root;
	slot = ARRAY_SLOT(st->threads, st->nr_threads);
	if (!slot || u64_map_put(&st->by_tid, (uint64_t)pid << 32 | tid, st->nr_threads))
		goto fail;
	*slot = t;
	st->nr_threads++;
	return t;
fail:
	free(t);
	return NULL;
}

int folded_begin(FILE *out, struct export_head *h)
{
	(void)out;
	h->state = calloc(1, sizeof(*h->state));
	return h->state ? 0 : -ENOMEM;
}

static int64_t weight_of(const struct export_head *h, const struct export_call *c)
{
	if (c->unmatched || c->entry_only || c->unwound)
		return 0;
	if (h->weight == EXPORT_WEIGHT_ONCPU)
		return (int64_t)c->oncpu_ns;
	if (h->weight >= 0 && (size_t)h->weight < h->nr_events)
		return (int64_t)c->counters[h->weight];
	return (int64_t)c->dur_ns;
}

/*
 * Calls come in entry order, so a call's parent is the innermost open
 * frame of its thread that is shallower and has not returned by its entry.
 * Its weight goes to its own stack and comes off its parent's: what is left
 * on each stack is its self weight.
 */
void folded_record(FILE *out, const struct export_head *h, const struct export_call *c)
{
	struct export_state *st = h->state;
	struct thread *t;
	struct frame *parent;
	int64_t w = weight_of(h, c);
	long long id;
	size_t idx, len;

	(void)out;
	if (!u64_map_get(&st->by_tid, (uint64_t)c->pid << 32 | c->tid, &idx))
		t = st->threads[idx];
	else if (!(t = thread_new(st, h, c->pid, c->tid)))
		goto nomem;
	while (t->nr_frames && (t->frames[t->nr_frames - 1].depth >= c->depth ||
				t->frames[t->nr_frames - 1].end_ns <= c->ts_ns))
		t->nr_frames--;
	parent = t->nr_frames ? &t->frames[t->nr_frames - 1] : NULL;
	idx = parent ? parent->stack : t->root;
	len = st->stacks[idx].len;
	if (ARRAY_RESERVE(st->scratch, st->scratch_cap, len + 1))
		goto nomem;
	memcpy(st->scratch, st->stacks[idx].key, len);
	/* Recorded --by caller: an outermost call stands on its caller's frame ("caller;function"). */
	if (!parent && c->caller && scratch_add(st, &len, c->caller))
		goto nomem;
	if (scratch_add(st, &len, c->func) || (id = stack_of(st, st->scratch, len)) < 0)
		goto nomem;
	st->stacks[id].self += w;
	if (parent)
		st->stacks[parent->stack].self -= w;
	if (t->nr_frames < DLPROF_MAX_DEPTH)
		t->frames[t->nr_frames++] = (struct frame){ c->ts_ns + c->dur_ns, c->depth, (size_t)id };
	return;
nomem:
	st->err = -ENOMEM;
}

static int by_key(const void *a, const void *b)
{
	return strcmp((*(const struct stack *const *)a)->key, (*(const struct stack *const *)b)->key);
}

/* The stacks sorted by name, one line each; a stack that kept no weight of its own has none. */
static int print_stacks(FILE *out, struct export_state *st)
{
	struct stack **order = calloc(st->nr_stacks ? st->nr_stacks : 1, sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < st->nr_stacks; i++)
		order[i] = &st->stacks[i];
	qsort(order, st->nr_stacks, sizeof(*order), by_key);
	for (size_t i = 0; i < st->nr_stacks; i++)
		if (order[i]->self > 0)
			fprintf(out, "%s %" PRId64 "\n", order[i]->key, order[i]->self);
	free(order);
	return 0;
}

int folded_end(FILE *out, struct export_head *h)
{
	struct export_state *st = h->state;
	int err = st->err;

	if (!err)
		err = print_stacks(out, st);
	for (size_t i = 0; i < st->nr_stacks; i++)
		free(st->stacks[i].key);
	for (size_t i = 0; i < st->nr_threads; i++)
		free(st->threads[i]);
	free(st->stacks);
	free(st->threads);
	free(st->scratch);
	u64_map_free(&st->by_hash);
	u64_map_free(&st->by_tid);
	free(st);
	h->state = NULL;
	return err;
}
