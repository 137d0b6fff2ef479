// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_log.h"
#include "util/messages.h"

void agent_log(const char *event, const char *fmt, ...)
{
	char line[4096], ts[32];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	n = snprintf(line, sizeof(line), "ts=%s.%03ldZ event=%s ", ts, now.tv_nsec / 1000000, event);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line) - 1)
		vsnprintf(line + n, sizeof(line) - 1 - (size_t)n, fmt, ap);
	va_end(ap);
	/*
	 * One write(2) per line, newline included: the engine's threads log too,
	 * and stdio's unbuffered stderr may split a line into several writes,
	 * which other lines could then fall between.
	 */
	n = (int)strlen(line);
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;	/* nowhere left to say it */
}

static void engine_message(enum msg_level level, const char *text)
{
	char quoted[2048];
	size_t n = 0;

	for (const char *c = text; *c && n + 3 < sizeof(quoted); c++) {
		if (*c == '"' || *c == '\\')
			quoted[n++] = '\\';
		quoted[n++] = *c == '\n' ? ' ' : *c;
	}
	quoted[n] = '\0';
	agent_log(level == MSG_WARN ? "warning" : level == MSG_NOTE ? "note" : "error", "what=engine msg=\"%s\"",
		  quoted);
}

void agent_log_engine_messages(void)
{
	messages_set_print(engine_message);
}
