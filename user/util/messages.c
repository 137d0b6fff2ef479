// SPDX-License-Identifier: GPL-2.0-only
#include <stdarg.h>
#include <stdio.h>

#include "util/messages.h"

static void cli_print(enum msg_level level, const char *text)
{
	/* One write per line: lines of concurrent writers never interleave. */
	fprintf(stderr, "dlprof-bpf: %s%s\n", level == MSG_WARN ? "warning: " : "", text);
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
