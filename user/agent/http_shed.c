// SPDX-License-Identifier: GPL-2.0-only
#include "agent/http_shed.h"

/* The oldest connection the pressure may shed, or n when none may be. */
static size_t oldest_sheddable(const struct http_shed_limits *lim, const struct http_conn_age *conns, size_t n,
			       const bool *shed)
{
	size_t oldest = n;

	for (size_t i = 0; i < n; i++) {
		if (shed[i] || conns[i].answering || conns[i].age_ms < lim->min_age_ms)
			continue;
		if (oldest == n || conns[i].age_ms > conns[oldest].age_ms)
			oldest = i;
	}
	return oldest;
}

size_t http_shed__pick(const struct http_shed_limits *lim, const struct http_conn_age *conns, size_t n,
		       bool *shed)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		shed[i] = conns[i].age_ms >= lim->deadline_ms;
		count += shed[i];
	}
	while (n - count > lim->keep) {
		size_t i = oldest_sheddable(lim, conns, n, shed);

		if (i == n)
			break;
		shed[i] = true;
		count++;
	}
	return count;
}
