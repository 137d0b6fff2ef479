/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which of the endpoint's connections to close, as a pure function of
 * their ages: slow or stuck clients must not hold the slots a liveness
 * probe or a scrape needs (docs/agent.md, "Endpoints").
 */
#ifndef DLPROF_AGENT_HTTP_SHED_H
#define DLPROF_AGENT_HTTP_SHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One connection as the policy sees it. */
struct http_conn_age {
	uint64_t age_ms;	/* since its current request began: its accept, or its previous answer's end */
	bool answering;		/* its request was read whole and is being answered */
};

struct http_shed_limits {
	uint64_t deadline_ms;	/* a request, read and answered, takes at most this long */
	size_t keep;		/* past this many connections, requests still being read are shed, */
	uint64_t min_age_ms;	/* oldest first, once at least this old */
};

/*
 * Sets shed[i] for each connection to close now and returns how many:
 * every one past the deadline; then, while more than keep would remain,
 * the oldest whose request is not read whole yet and is at least
 * min_age_ms old. A request read whole is never shed for the pressure:
 * it is answered at once, and a client that sends its request in one
 * piece (a probe, a scrape) thus always gets its answer.
 */
size_t http_shed__pick(const struct http_shed_limits *lim, const struct http_conn_age *conns, size_t n,
		       bool *shed);

#endif /* DLPROF_AGENT_HTTP_SHED_H */
