// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "probe/attach.h"
#include "probe/detacher.h"
#include "probe/link_closer.h"
#include "util/array.h"
#include "util/clock.h"

void link_closer__close(struct link_closer *c, struct attacher *a)
{
	struct detacher **slot = a ? ARRAY_SLOT(c->closing, c->nr_closing) : NULL;
	struct detacher *d = slot ? detacher__start(a) : NULL;

	if (d) {
		*slot = d;
		c->nr_closing++;
	} else {
		attacher__free(a);
	}
}

bool link_closer__close_hot_first(struct link_closer *c, struct attacher *const *as, size_t n,
				  const uint64_t *calls, size_t nr_funcs)
{
	struct detacher **slot = ARRAY_SLOT(c->closing, c->nr_closing);
	struct detacher *d = slot ? detacher__start_many(as, n, calls, nr_funcs) : NULL;

	if (!d)
		return false;
	*slot = d;
	c->nr_closing++;
	return true;
}

void link_closer__reap(struct link_closer *c)
{
	size_t k = 0;

	for (size_t i = 0; i < c->nr_closing; i++) {
		if (detacher__done(c->closing[i]))
			detacher__free(c->closing[i]);
		else
			c->closing[k++] = c->closing[i];
	}
	c->nr_closing = k;
}

bool link_closer__closed(struct link_closer *c)
{
	link_closer__reap(c);
	return !c->nr_closing;
}

bool link_closer__wait(struct link_closer *c, int patience_ms)
{
	double end = mono_seconds() + patience_ms / 1e3;
	bool all = true;

	for (size_t k = 0; k < c->nr_closing; k++) {
		struct detacher *d = c->closing[k];

		while (!detacher__done(d)) {
			struct pollfd pfd = { .fd = detacher__fd(d), .events = POLLIN };
			int left = (int)((end - mono_seconds()) * 1e3);

			if (left <= 0 || (poll(&pfd, 1, left) < 0 && errno != EINTR))
				break;
		}
		all &= detacher__done(d);
		detacher__free(d);
	}
	c->nr_closing = 0;
	return all;
}

void link_closer__progress(const struct link_closer *c, size_t *done, size_t *total)
{
	for (size_t k = 0; k < c->nr_closing; k++) {
		size_t closed, all;

		detacher__progress(c->closing[k], &closed, &all);
		*done += closed;
		*total += all;
	}
}

void link_closer__release(struct link_closer *c)
{
	link_closer__wait(c, 0 /* patience_ms: none, what closes goes on alone */);
	free(c->closing);
	c->closing = NULL;
}
