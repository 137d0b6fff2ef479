// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "util/messages.h"

static void cli_print(enum msg_level level, const char *text)
{
	char line[4200];
	int n = snprintf(line, sizeof(line) - 1, "dlprof-bpf: %s%s", level == MSG_WARN ? "warning: " : "", text);

	/* One write(2) per line, newline included: lines of concurrent writers never interleave. */
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;	/* nowhere left to say it */
}

static msg_print_fn print = cli_print;

msg_print_fn messages_set_print(msg_print_fn fn)
{
	msg_print_fn old = print;

	print = fn ? fn : cli_print;
	return old;
}

static void vmsg(enum msg_level level, const char *fmt, va_list ap)
{
	char text[4096];

	vsnprintf(text, sizeof(text), fmt, ap);
	print(level, text);
}

void errmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(MSG_ERROR, fmt, ap);
	va_end(ap);
}

void notemsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(MSG_NOTE, fmt, ap);
	va_end(ap);
}

void warnmsg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(MSG_WARN, fmt, ap);
	va_end(ap);
}
