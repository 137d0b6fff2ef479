/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Prometheus text exposition format (version 0.0.4): family headers,
 * samples with escaped label values, numbers as Prometheus parses them.
 * Pure functions over a growable buffer: no I/O.
 */
#ifndef DLPROF_AGENT_PROM_TEXT_H
#define DLPROF_AGENT_PROM_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

struct prom_proto;

/*
 * A growing text; on allocation failure it stays as it was and failed is
 * set. With proto set, prom_family and prom_sample build the protobuf
 * exposition there instead (prom_proto.h), and the text stays empty.
 */
struct prom_buf {
	char *data;
	size_t len;
	size_t cap;
	bool failed;
	struct prom_proto *proto;
};

struct prom_label {
	const char *name;
	const char *value;	/* NULL: the label is left out */
};

void prom_buf_free(struct prom_buf *b);
void prom_printf(struct prom_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A label value as the format wants it: \\, \" and \n escaped. */
void prom_escape_value(struct prom_buf *b, const char *value);
/* "# HELP name help" (help escaped: \\ and \n) and "# TYPE name type". */
void prom_family(struct prom_buf *b, const char *name, const char *type, const char *help);
/*
 * One sample: name{labels...} value. extra (name, value) is appended after
 * the labels when extra_name is not NULL (a histogram's le, an event).
 */
void prom_sample(struct prom_buf *b, const char *name, const struct prom_label *labels, size_t nr_labels,
		 const char *extra_name, const char *extra_value, double value);
/* A float as Prometheus reads it: integers exactly, +Inf, NaN. */
void prom_value(struct prom_buf *b, double v);

#endif /* DLPROF_AGENT_PROM_TEXT_H */
