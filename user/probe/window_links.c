// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sampling windows' links (probe/relink.h): a subset of the functions,
 * linked beside the main links and in every copy of the libraries, until
 * the front end frees them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/attach.h"
#include "probe/copy_discovery.h"
#include "probe/probe_attach.h"
#include "probe/relink.h"
#include "probe/session_internal.h"

struct session_links {
	struct attacher *attacher;
	struct attacher **copies;	/* the same functions in the libraries' other copies */
	size_t nr_copies;
};

struct session_links *session__links_attach(struct session *s, const bool *on, char *err, size_t err_sz)
{
	struct session_links *l = calloc(1, sizeof(*l));
	size_t skipped = 0;
	int ret;

	if (!l || !(l->attacher = attacher__new(s->mode, &s->progs, 0))) {
		session_fail(err, err_sz, 0, "cannot prepare the attach: %s", strerror(errno));
		free(l);
		return NULL;
	}
	ret = probe_table__attach_subset(&s->table, l->attacher, on, 0, s->table.nr_funcs, 0, &skipped);
	if (!ret && s->discovery)
		ret = lib_copies__attach_subset(copy_discovery__copies(s->discovery), on, &l->copies, &l->nr_copies);
	if (ret) {
		session_fail(err, err_sz, ret, "cannot attach: %s", attach_strerror(ret));
		session__links_free(s, l);
		errno = -ret;
		return NULL;
	}
	return l;
}

/*
 * A window's classic probes keep counting until the kernel has closed
 * each, a grace period apiece (probe/detacher.h), which for a window of a
 * hundred functions is long enough for its hot functions to count all
 * along. In one detacher, the most called functions' probes go first, so
 * theirs stop within the first closes. false: left as they were.
 */
static bool close_hot_first(struct session *s, struct session_links *l)
{
	struct attacher **all = calloc(l->nr_copies + 1, sizeof(*all));
	uint64_t *calls = calloc(s->table.nr_funcs ?: 1, sizeof(*calls));
	bool done = false;

	if (all && calls && !session__read_calls(s, calls)) {
		all[0] = l->attacher;
		memcpy(all + 1, l->copies, l->nr_copies * sizeof(*all));
		done = link_closer__close_hot_first(&s->closer, all, l->nr_copies + 1, calls, s->table.nr_funcs);
	}
	free(all);
	free(calls);
	return done;
}

void session__links_free(struct session *s, struct session_links *l)
{
	if (!l)
		return;
	link_closer__reap(&s->closer);
	if (s->mode != ATTACH_CLASSIC || !close_hot_first(s, l)) {
		link_closer__close(&s->closer, l->attacher);
		for (size_t k = 0; k < l->nr_copies; k++)
			link_closer__close(&s->closer, l->copies[k]);
	}
	free(l->copies);
	free(l);
}

bool session__links_closed(struct session *s)
{
	return link_closer__closed(&s->closer);
}

bool session__links_wait_closed(struct session *s, int patience_ms)
{
	return link_closer__wait(&s->closer, patience_ms);
}
