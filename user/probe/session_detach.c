// SPDX-License-Identifier: GPL-2.0-only
/*
 * The session's detach at its stop (session__stop): every link of the
 * profile closed, the classic ones hottest first, waited for with the
 * front end's patience, cancel and progress (probe/detacher.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "probe/attach.h"
#include "probe/copy_discovery.h"
#include "probe/detacher.h"
#include "probe/session_internal.h"
#include "util/clock.h"

/* The links closed so far by d and the other detachers, and in all: the detach's progress. */
static void detach_progress(struct session *s, const struct detacher *d, bool final)
{
	size_t done = 0, total = 0;

	link_closer__progress(&s->closer, &done, &total);
	if (d) {
		size_t c, t;

		detacher__progress(d, &c, &t);
		done += c;
		total += t;
	}
	session_progress(s, SESSION_DETACHING, done, total, final);
}

static bool wait_detach(struct session *s, struct detacher *d, const struct session_stop_wait *w, double t0)
{
	bool told = false;

	while (!detacher__done(d)) {
		struct pollfd fds[2] = {
			{ .fd = detacher__fd(d), .events = POLLIN },
			{ .fd = w->cancel_fd, .events = POLLIN },
		};
		int timeout = told ? -1 : (int)((t0 + w->patience_ms / 1e3 - mono_seconds()) * 1e3) + 1;
		int n;

		if (!told && timeout <= 0)
			timeout = 0;
		if (s->opts.progress && (timeout < 0 || timeout > SESSION_PROGRESS_MS))
			timeout = SESSION_PROGRESS_MS;
		n = poll(fds, 2, timeout);
		if (n < 0 && errno != EINTR)
			return true;
		detach_progress(s, d, false);
		if (n == 0 && !told && mono_seconds() >= t0 + w->patience_ms / 1e3) {
			if (w->slow)
				w->slow(w->ctx);
			told = true;
		}
		if (n > 0 && (fds[1].revents & POLLIN) && w->cancel && w->cancel(w->ctx))
			return false;
	}
	return true;
}

/*
 * Classic probes go in one detacher, the most called functions' first,
 * since the kernel closes them one at a time anyway. Other links each on
 * a thread of its own, so that their grace periods overlap.
 */
struct detacher *session_detach_start(struct session *s)
{
	size_t nr_chunks, n = 0;
	struct attacher **chunks = relink__chunks(s->relink, &nr_chunks);
	struct attacher **all = calloc(nr_chunks + 1, sizeof(*all));
	uint64_t *calls = NULL;
	struct detacher *d = NULL;

	if (s->mode == ATTACH_CLASSIC && all) {
		if (s->attacher)
			all[n++] = s->attacher;
		for (size_t c = 0; c < nr_chunks; c++)
			if (chunks[c])
				all[n++] = chunks[c];
		calls = n ? calloc(s->table.nr_funcs ?: 1, sizeof(*calls)) : NULL;
		if (calls && session__read_calls(s, calls)) {
			free(calls);
			calls = NULL;
		}
		d = n ? detacher__start_many(all, n, calls, s->table.nr_funcs) : NULL;
		if (d) {
			memset(chunks, 0, nr_chunks * sizeof(*chunks));
			s->attacher = NULL;
		}
	}
	free(calls);
	free(all);
	for (size_t c = 0; c < nr_chunks; c++) {
		link_closer__close(&s->closer, chunks[c]);
		chunks[c] = NULL;
	}
	if (!d && s->attacher) {
		d = detacher__start(s->attacher);
		if (!d)
			attacher__free(s->attacher);
	}
	s->attacher = NULL;
	return d;
}

int session_detach(struct session *s, const struct session_stop_wait *w)
{
	double t0 = mono_seconds();
	struct detacher *d;
	bool done = true;

	s->phase_t0 = s->progress_last = t0;
	/* The copies first (their detach starts on threads): no new one may be attached while the rest goes. */
	copy_discovery__stop(s->discovery, 0 /* timeout_ms: waited for below */);
	d = session_detach_start(s);
	if (d)
		done = wait_detach(s, d, w, t0);
	detach_progress(s, d, true);
	if (!link_closer__wait(&s->closer, done ? w->patience_ms : 0))
		done = false;
	if (copy_discovery__stop(s->discovery, done ? w->patience_ms : 0))
		done = false;
	s->tot.detach_unfinished = !done;
	s->tot.detach_ms = (mono_seconds() - t0) * 1e3;
	detacher__free(d);
	return done ? 0 : 1;
}
