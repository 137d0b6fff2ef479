// SPDX-License-Identifier: GPL-2.0-only
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/prom_proto.h"
#include "agent/prom_text.h"

static bool reserve(struct prom_buf *b, size_t more)
{
	size_t cap = b->cap ? b->cap : 4096;
	char *p;

	if (b->failed)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

static void put(struct prom_buf *b, const char *s, size_t len)
{
	if (!reserve(b, len))
		return;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void prom_buf_free(struct prom_buf *b)
{
	free(b->data);
	*b = (struct prom_buf){ .proto = b->proto };
}

void prom_printf(struct prom_buf *b, const char *fmt, ...)
{
	char small[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		put(b, small, (size_t)n);
		return;
	}
	if (!reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Runs of plain bytes copied whole: a scrape of thousands of series is mostly label values. */
static void put_escaped(struct prom_buf *b, const char *s, bool quotes)
{
	const char *special = quotes ? "\\\n\"" : "\\\n";

	while (*s) {
		size_t plain = strcspn(s, special);

		put(b, s, plain);
		s += plain;
		if (!*s)
			break;
		put(b, *s == '\n' ? "\\n" : *s == '"' ? "\\\"" : "\\\\", 2);
		s++;
	}
}

void prom_escape_value(struct prom_buf *b, const char *value)
{
	put_escaped(b, value, true);
}

void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help)
{
	if (b->proto) {
		prom_proto__family(b->proto, name, type, help);
		return;
	}
	prom_printf(b, "# HELP %s ", name);
	put_escaped(b, help, false);
	prom_printf(b, "\n# TYPE %s %s\n", name, type);
}

/* The shortest decimal that reads back as v: 2.3404e-05, not 2.3404000000000002e-05. */
static const char *shortest(double v, char *buf, size_t sz)
{
	for (int prec = 15; prec < 17; prec++) {
		snprintf(buf, sz, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return buf;
	}
	snprintf(buf, sz, "%.17g", v);
	return buf;
}

void prom_value(struct prom_buf *b, double v)
{
	char buf[32];

	if (isnan(v))
		prom_printf(b, "NaN");
	else if (isinf(v))
		prom_printf(b, v > 0 ? "+Inf" : "-Inf");
	/* Counts up to 2^53 print whole: a scrape compared with a workload's count must match exactly. */
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		prom_printf(b, "%.0f", v);
	else
		prom_printf(b, "%s", shortest(v, buf, sizeof(buf)));
}

static void put_label(struct prom_buf *b, bool *first, const char *name, const char *value)
{
	put(b, *first ? "{" : ",", 1);
	put(b, name, strlen(name));
	put(b, "=\"", 2);
	prom_escape_value(b, value);
	put(b, "\"", 1);
	*first = false;
}

void prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels, size_t nr_labels,
		 const char *extra_name, const char *extra_value, double value)
{
	bool first = true;

	if (b->proto) {
		prom_proto__sample(b->proto, labels, nr_labels, extra_name, extra_value, value);
		return;
	}
	put(b, name, strlen(name));
	for (size_t i = 0; i < nr_labels; i++)
		if (labels[i].value)
			put_label(b, &first, labels[i].name, labels[i].value);
	if (extra_name)
		put_label(b, &first, extra_name, extra_value);
	put(b, first ? " " : "} ", first ? 1 : 2);
	prom_value(b, value);
	put(b, "\n", 1);
}
