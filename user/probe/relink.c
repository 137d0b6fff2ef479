// SPDX-License-Identifier: GPL-2.0-only
/*
 * The relink machine (probe/relink.h): from the first relink on, the
 * functions' main links are chunks of RELINK_CHUNK ids, each re-created
 * only when its functions change, each with a generation the BPF side
 * gates its counts by (include/dlprof.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>

#include "dlprof.h"
#include "probe/attach.h"
#include "probe/copy_discovery.h"
#include "probe/probe_attach.h"
#include "probe/relink.h"
#include "probe/session_internal.h"
#include "probe/unwind_hooks.h"
#include "util/clock.h"
#include "util/messages.h"

/*
 * A relink re-creates only the chunks whose functions change: closing one
 * link of a whole big library takes the kernel long enough for the hot
 * probes it was meant to remove to keep firing meanwhile.
 */
#define RELINK_CHUNK 32

/* How long a relink waits for the old links to close before it goes on anyway (a stuck task holds them). */
#define RELINK_PATIENCE_MS 5000

struct relink {
	struct attacher **chunks;	/* each chunk's link; NULL: it holds no function */
	size_t nr_chunks;
	bool *linked;			/* which functions the chunks hold */
	__u32 *chunk_gen;		/* each chunk's current link generation (the BPF map's copy) */
	/* A relink begun and not finished: its old links closing, since when, and whether calls went unseen. */
	bool relinking;
	bool gap;			/* a copy's links (or the start's) closed before their new ones */
	int err;			/* a copy's links could not be closed, or a generation not moved: said at the finish */
	double t0;
};

size_t relink_nr_chunks(size_t nr_funcs)
{
	return (nr_funcs + RELINK_CHUNK - 1) / RELINK_CHUNK;
}

struct attacher **relink__chunks(struct relink *r, size_t *n)
{
	*n = r ? r->nr_chunks : 0;
	return r ? r->chunks : NULL;
}

void relink__free(struct relink *r)
{
	if (!r)
		return;
	for (size_t c = 0; c < r->nr_chunks; c++)
		attacher__free(r->chunks[c]);
	free(r->chunks);
	free(r->linked);
	free(r->chunk_gen);
	free(r);
}

/* The start's links go; the unwinder's probes stay, in an attacher of their own. */
static int unlink_start(struct session *s)
{
	attacher__free(s->attacher);
	s->attacher = attacher__new(s->mode, &s->progs, 0);
	if (!s->attacher)
		return -errno;
	if (s->unwind_fix || s->opts.unwind_unsafe)
		return unwind_hooks__attach(s->attacher, session_first_pid(s), &s->tot.unwind_hooks);
	return 0;
}

/* The first relink's machine, all or none (the next relink tries again from the start). */
static int relink_new(struct session *s, bool *all_changed)
{
	size_t nr_chunks = relink_nr_chunks(s->table.nr_funcs);
	struct relink *r;

	/* A chunk's index + 1 must fit its cookie's field (include/dlprof.h). */
	if (nr_chunks >= DLPROF_COOKIE_CHUNK_MASK >> DLPROF_COOKIE_CHUNK_SHIFT)
		return -E2BIG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->nr_chunks = nr_chunks;
	r->chunks = calloc(nr_chunks ?: 1, sizeof(*r->chunks));
	r->linked = calloc(s->table.nr_funcs ?: 1, sizeof(*r->linked));
	r->chunk_gen = calloc(nr_chunks ?: 1, sizeof(*r->chunk_gen));
	if (!r->chunks || !r->linked || !r->chunk_gen) {
		relink__free(r);
		return -ENOMEM;
	}
	s->relink = r;
	*all_changed = !s->opts.start_unlinked;
	if (s->opts.start_unlinked)
		return 0;
	/* The start's links are not gated: they go first, and their calls meanwhile are unseen. */
	r->gap = true;
	return unlink_start(s);
}

/* The end of the chunk that starts at function lo. */
static size_t chunk_end(const struct session *s, size_t lo)
{
	return lo + RELINK_CHUNK < s->table.nr_funcs ? lo + RELINK_CHUNK : s->table.nr_funcs;
}

/* The copies' links whose functions change close with the primaries' (lib_copies.h). */
static int unlink_copies(struct session *s, const bool *on)
{
	struct attacher **old = NULL;
	size_t nr = 0;
	int ret;

	if (!s->discovery)
		return 0;
	ret = lib_copies__unlink_changed(copy_discovery__copies(s->discovery), on, &old, &nr);
	for (size_t k = 0; k < nr; k++)
		link_closer__close(&s->closer, old[k]);
	/* A copy's link is re-created whole, after its old one has closed: its calls meanwhile are unseen. */
	s->relink->gap |= nr > 0;
	free(old);
	return ret;
}

static bool chunk_changed(const struct session *s, const bool *on, size_t c)
{
	size_t lo = c * RELINK_CHUNK;

	return memcmp(on + lo, s->relink->linked + lo, (chunk_end(s, lo) - lo) * sizeof(*on));
}

/* The generation chunk c's next link carries (it wraps: an old link closes long before). */
static __u32 next_gen(const struct relink *r, size_t c)
{
	return (r->chunk_gen[c] + 1) & (__u32)(DLPROF_COOKIE_GEN_MASK >> DLPROF_COOKIE_GEN_SHIFT);
}

/* Chunk c's new link for the functions on[] wants, of the next generation; NULL where it wants none. */
static int chunk_link(struct session *s, const bool *on, size_t c, struct attacher **out)
{
	size_t lo = c * RELINK_CHUNK, hi = chunk_end(s, lo), skipped = 0;
	uint64_t gate = (uint64_t)(c + 1) << DLPROF_COOKIE_CHUNK_SHIFT |
			(uint64_t)next_gen(s->relink, c) << DLPROF_COOKIE_GEN_SHIFT;
	bool any = false;
	int ret;

	*out = NULL;
	for (size_t i = lo; i < hi; i++)
		any |= on[i];
	if (!any)
		return 0;
	*out = attacher__new(s->mode, &s->progs, 0);
	if (!*out)
		return -errno;
	ret = probe_table__attach_subset(&s->table, *out, on, lo, hi, gate, &skipped);
	if (ret) {
		attacher__free(*out);
		*out = NULL;
	}
	return ret;
}

/* Each changed chunk's generation moved to its new link (fresh[c]), its old link closing. */
static void chunks_swap(struct session *s, const bool *on, bool all_changed, struct attacher **fresh)
{
	struct relink *r = s->relink;
	size_t attached = 0;

	for (size_t c = 0; c < r->nr_chunks; c++) {
		size_t lo = c * RELINK_CHUNK;
		__u32 key = (__u32)c;

		if (!all_changed && !chunk_changed(s, on, c))
			continue;
		if (fresh[c]) {
			r->chunk_gen[c] = next_gen(r, c);
			/* An array's element of a valid key: the update cannot fail but for a broken map. */
			if (bpf_map_update_elem(s->chunk_gen_fd, &key, &r->chunk_gen[c], BPF_ANY))
				r->err = r->err ?: -errno;
		}
		link_closer__close(&s->closer, r->chunks[c]);
		r->chunks[c] = fresh[c];
		memcpy(r->linked + lo, on + lo, (chunk_end(s, lo) - lo) * sizeof(*on));
	}
	for (size_t c = 0; c < r->nr_chunks; c++)
		attached += r->chunks[c] ? attacher__nr_attached(r->chunks[c]) : 0;
	s->tot.functions_attached = attached;
}

/*
 * Every changed chunk's new link is made first, all or none (a failure
 * leaves the old links as they were); then each chunk's generation moves
 * to its new link, and the old links close, each on a thread, so that
 * their grace periods overlap. Between the two, a function both hold
 * fires both programs, and the gate counts one (bpf/profile.bpf.c).
 */
int session__relink_begin(struct session *s, const bool *on, char *err, size_t err_sz)
{
	bool all_changed = false;
	struct attacher **fresh;
	struct relink *r;
	int ret = 0;

	if (!s->relink && (ret = relink_new(s, &all_changed)))
		return session_fail(err, err_sz, ret, "cannot prepare the attach: %s", strerror(-ret));
	r = s->relink;
	fresh = calloc(r->nr_chunks ?: 1, sizeof(*fresh));
	if (!fresh)
		return session_fail(err, err_sz, -ENOMEM, "cannot prepare the attach: %s", strerror(ENOMEM));
	for (size_t c = 0; c < r->nr_chunks && !ret; c++)
		if (all_changed || chunk_changed(s, on, c))
			ret = chunk_link(s, on, c, &fresh[c]);
	if (ret) {
		for (size_t c = 0; c < r->nr_chunks; c++)
			attacher__free(fresh[c]);
		free(fresh);
		return session_fail(err, err_sz, ret, "cannot attach again: %s", attach_strerror(ret));
	}
	if (!r->relinking)
		r->t0 = mono_seconds();
	r->relinking = true;
	chunks_swap(s, on, all_changed, fresh);
	free(fresh);
	r->err = r->err ?: unlink_copies(s, on);
	return 0;
}

bool session__relink_ready(struct session *s)
{
	return s->relink && s->relink->relinking && session__links_closed(s);
}

int session__relink_finish(struct session *s, double *gap_ms, char *err, size_t err_sz)
{
	struct relink *r = s->relink;
	int ret;

	*gap_ms = 0;
	if (!r || !r->relinking)
		return 0;
	ret = r->err;
	r->err = 0;
	if (!session__links_wait_closed(s, RELINK_PATIENCE_MS))
		warnmsg("the old links are still closing after %d ms; attaching again anyway", RELINK_PATIENCE_MS);
	/* A copy that cannot be attached again is said on stderr; the primaries' links count first. */
	if (!ret && s->discovery)
		ret = lib_copies__relink(copy_discovery__copies(s->discovery));
	r->relinking = false;
	if (r->gap)
		*gap_ms = (mono_seconds() - r->t0) * 1e3;
	r->gap = false;
	if (ret)
		return session_fail(err, err_sz, ret, "cannot attach again: %s", attach_strerror(ret));
	return 0;
}
