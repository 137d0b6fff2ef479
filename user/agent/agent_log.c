// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "agent/agent_log.h"

void agent_log(const char *event, const char *fmt, ...)
{
	char line[1024], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "ts=%s.%03ldZ event=%s ", ts, now.tv_nsec / 1000000, event);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line: lines of a log collector never interleave. */
	fprintf(stderr, "%s\n", line);
}
