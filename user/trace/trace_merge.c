// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace_heap.h"
#include "trace/trace_merge.h"
#include "util/array.h"

#define NO_BLOCK UINT32_MAX

struct source {
	struct shard_reader *r;
	char *name;
	__u32 *next_in_run;		/* per block: the next block of its run, or NO_BLOCK */
};

struct run {
	__u32 src;
	__u32 block;			/* its next unopened block */
};

/* An open block: decoded records and the position of the next one. */
struct cursor {
	struct call_record *recs;
	__u32 cap;
	__u32 n;
	__u32 pos;
};

struct trace_merge {
	struct source *srcs;
	size_t nr_srcs;
	size_t cap_srcs;
	struct run *runs;
	size_t nr_runs;
	size_t cap_runs;
	struct trace_heap pending;	/* (first_ts_ns of a run's next block, run) */
	struct trace_heap open;		/* (ts_ns of a cursor's next record, cursor) */
	struct cursor *curs;
	__u32 nr_curs;
	__u32 *free_curs;
	__u32 nr_free;
	bool advance;			/* the top cursor's record was handed out */
	struct merge_damage *dmg;
	size_t nr_dmg;
	size_t cap_dmg;
	__u64 budget;
	__u64 open_bytes;
	__u32 open_blocks;
	struct trace_merge_stats st;
};

struct trace_merge *trace_merge__new(__u64 budget_bytes)
{
	struct trace_merge *m = calloc(1, sizeof(*m));

	if (m)
		m->budget = budget_bytes ? budget_bytes : TRACE_MERGE_DEFAULT_BUDGET;
	return m;
}

void trace_merge__free(struct trace_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_srcs; i++) {
		shard_reader__free(m->srcs[i].r);
		free(m->srcs[i].name);
		free(m->srcs[i].next_in_run);
	}
	for (__u32 i = 0; i < m->nr_curs; i++)
		free(m->curs[i].recs);
	for (size_t i = 0; i < m->nr_dmg; i++)
		free((char *)m->dmg[i].source);
	free(m->srcs);
	free(m->runs);
	free(m->curs);
	free(m->free_curs);
	free(m->dmg);
	heap_free(&m->pending);
	heap_free(&m->open);
	free(m);
}

int trace_merge__add_damage(struct trace_merge *m, const char *name, const struct trace_damage *d)
{
	char *s;

	if (ARRAY_RESERVE(m->dmg, m->cap_dmg, m->nr_dmg + 1))
		return -ENOMEM;
	s = strdup(name);
	if (!s)
		return -ENOMEM;
	m->dmg[m->nr_dmg].source = s;
	m->dmg[m->nr_dmg].d = *d;
	m->nr_dmg++;
	return 0;
}

static int new_run(struct trace_merge *m, __u32 src, __u32 block, __u64 first_ts)
{
	if (ARRAY_RESERVE(m->runs, m->cap_runs, m->nr_runs + 1))
		return -ENOMEM;
	m->runs[m->nr_runs] = (struct run){ .src = src, .block = block };
	return heap_push(&m->pending, first_ts, m->nr_runs++);
}

/*
 * Chains the normal blocks of a source into one run as long as each starts
 * no earlier than the previous one ended (what the writer guarantees);
 * a late block, or a normal block that goes back in time, starts a run of
 * its own. Correct order never depends on the file being well formed.
 */
static int build_runs(struct trace_merge *m, __u32 src)
{
	struct source *s = &m->srcs[src];
	size_t n = shard_reader__nr_blocks(s->r);
	__u32 main_last = NO_BLOCK;
	__u64 main_last_ts = 0;
	int err;

	if (!n)
		return 0;
	if (n >= NO_BLOCK)
		return -E2BIG;
	s->next_in_run = malloc(n * sizeof(*s->next_in_run));
	if (!s->next_in_run)
		return -ENOMEM;
	for (__u32 i = 0; i < n; i++) {
		const struct trace_block_header *h = &shard_reader__block(s->r, i)->h;

		s->next_in_run[i] = NO_BLOCK;
		m->st.bytes_total += sizeof(*h) + h->payload_len;
		if (h->flags & TRACE_BLOCK_F_LATE) {
			err = new_run(m, src, i, h->first_ts_ns);
		} else if (main_last != NO_BLOCK && h->first_ts_ns >= main_last_ts) {
			s->next_in_run[main_last] = i;
			err = 0;
		} else {
			err = new_run(m, src, i, h->first_ts_ns);
		}
		if (err)
			return err;
		if (!(h->flags & TRACE_BLOCK_F_LATE)) {
			main_last = i;
			main_last_ts = h->last_ts_ns;
		}
	}
	return 0;
}

int trace_merge__add_source(struct trace_merge *m, struct shard_reader *r, const char *name)
{
	const struct trace_damage *stop = shard_reader__stop(r);
	struct source *s;
	int err;

	if (ARRAY_RESERVE(m->srcs, m->cap_srcs, m->nr_srcs + 1)) {
		shard_reader__free(r);
		return -ENOMEM;
	}
	s = &m->srcs[m->nr_srcs];
	memset(s, 0, sizeof(*s));
	s->r = r;
	s->name = strdup(name);
	m->nr_srcs++;
	if (!s->name)
		return -ENOMEM;
	if (stop->reason != TRACE_DMG_NONE) {
		err = trace_merge__add_damage(m, name, stop);
		if (err)
			return err;
	}
	err = build_runs(m, (__u32)(m->nr_srcs - 1));
	m->st.nr_runs = (__u32)m->nr_runs;
	return err;
}

static int get_cursor(struct trace_merge *m, __u32 nr, __u32 *id)
{
	struct cursor *c;

	if (m->nr_free) {
		*id = m->free_curs[--m->nr_free];
	} else {
		/* free_curs keeps room for every cursor: put_cursor never fails. */
		if (!ARRAY_SLOT(m->free_curs, m->nr_curs) || !ARRAY_SLOT(m->curs, m->nr_curs))
			return -ENOMEM;
		*id = m->nr_curs++;
	}
	c = &m->curs[*id];
	if (c->cap < nr) {
		struct call_record *p = realloc(c->recs, (size_t)nr * sizeof(*p));

		if (!p) {
			m->free_curs[m->nr_free++] = *id;
			return -ENOMEM;
		}
		c->recs = p;
		c->cap = nr;
	}
	return 0;
}

static void put_cursor(struct trace_merge *m, __u32 id)
{
	m->open_bytes -= (__u64)m->curs[id].n * sizeof(struct call_record);
	m->open_blocks--;
	m->free_curs[m->nr_free++] = id;
}

static int block_damage(struct trace_merge *m, const struct source *s,
			const struct block_ref *b, enum trace_damage_reason why)
{
	struct trace_damage d = {
		.offset = b->offset,
		.bytes = sizeof(b->h) + b->h.payload_len,
		.records = b->h.nr_records,
		.reason = why,
	};

	return trace_merge__add_damage(m, s->name, &d);
}

/* Opens the next block of the run whose next block starts first. */
static int open_next_block(struct trace_merge *m)
{
	struct heap_ent top = heap_pop(&m->pending);
	struct run *run = &m->runs[top.val];
	struct source *s = &m->srcs[run->src];
	__u32 blk = run->block, id;
	const struct block_ref *b = shard_reader__block(s->r, blk);
	__u64 raw = (__u64)b->h.nr_records * sizeof(struct call_record);
	enum trace_damage_reason why;
	int err;

	run->block = s->next_in_run[blk];
	if (run->block != NO_BLOCK) {
		err = heap_push(&m->pending, shard_reader__block(s->r, run->block)->h.first_ts_ns,
				top.val);
		if (err)
			return err;
	}
	m->st.bytes_done += sizeof(b->h) + b->h.payload_len;
	/* Only a hostile or absurd trace overlaps this much; it must not take all memory. */
	if (m->open_bytes + raw > m->budget)
		return block_damage(m, s, b, TRACE_DMG_OVERLAP);
	err = get_cursor(m, b->h.nr_records, &id);
	if (err)
		return err;
	why = shard_reader__read_block(s->r, blk, m->curs[id].recs);
	if (why) {
		m->free_curs[m->nr_free++] = id;
		return block_damage(m, s, b, why);
	}
	m->curs[id].n = b->h.nr_records;
	m->curs[id].pos = 0;
	err = heap_push(&m->open, m->curs[id].recs[0].ts_ns, id);
	if (err) {
		m->free_curs[m->nr_free++] = id;
		return err;
	}
	m->open_bytes += raw;
	m->open_blocks++;
	m->st.blocks_opened++;
	if (m->open_blocks > m->st.max_open_blocks)
		m->st.max_open_blocks = m->open_blocks;
	if (m->open_bytes > m->st.max_open_bytes)
		m->st.max_open_bytes = m->open_bytes;
	return 0;
}

int trace_merge__next(struct trace_merge *m, const struct call_record **rec)
{
	struct cursor *c;
	__u32 id;
	int err;

	if (m->advance) {
		m->advance = false;
		id = (__u32)heap_top(&m->open)->val;
		c = &m->curs[id];
		if (++c->pos < c->n) {
			heap_replace_top(&m->open, c->recs[c->pos].ts_ns, id);
		} else {
			heap_pop(&m->open);
			put_cursor(m, id);
		}
	}
	/* Open every block that may hold a record older than the next one out. */
	while (m->pending.n && (!m->open.n || heap_top(&m->pending)->key <= heap_top(&m->open)->key)) {
		err = open_next_block(m);
		if (err)
			return err;
	}
	if (!m->open.n)
		return 0;
	c = &m->curs[heap_top(&m->open)->val];
	*rec = &c->recs[c->pos];
	m->advance = true;
	m->st.records++;
	return 1;
}

size_t trace_merge__nr_damage(const struct trace_merge *m)
{
	return m->nr_dmg;
}

const struct merge_damage *trace_merge__damage(const struct trace_merge *m, size_t i)
{
	return i < m->nr_dmg ? &m->dmg[i] : NULL;
}

void trace_merge__stats(const struct trace_merge *m, struct trace_merge_stats *st)
{
	*st = m->st;
}
