/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The Prometheus protobuf exposition: length-delimited
 * io.prometheus.client.MetricFamily messages (protobuf-c), the form a
 * scraper asks for to get native histograms. Built family by family
 * through the same calls as the text (prom_text.h routes them here when
 * a prom_buf has a prom_proto); a family is packed when the next one
 * starts, so only one family's messages are held at a time.
 */
#ifndef DLPROF_AGENT_PROM_PROTO_H
#define DLPROF_AGENT_PROM_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/native_hist.h"
#include "agent/prom_text.h"

#define PROM_PROTO_CONTENT_TYPE \
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

struct prom_proto;

/* A histogram sample: classic buckets (cumulative, upper bounds in seconds, +Inf left out) and native ones. */
struct prom_hist {
	double count, sum;
	size_t nr_bounds;
	const double *upper_s;
	const double *cum;
	const struct native_hist *native;	/* NULL: classic only */
};

struct prom_proto *prom_proto__new(void);
void prom_proto__free(struct prom_proto *p);
void prom_proto__family(struct prom_proto *p, const char *name, const char *type, const char *help);
/* A counter's, gauge's or untyped family's sample; extra_name (not NULL) adds a label. */
void prom_proto__sample(struct prom_proto *p, const struct prom_label *l, size_t nl, const char *extra_name,
			const char *extra_value, double value);
void prom_proto__histogram(struct prom_proto *p, const struct prom_label *l, size_t nl, const struct prom_hist *h);
/* The stream (malloc'd, the caller's) and its length; NULL when memory ran out on the way. */
char *prom_proto__take(struct prom_proto *p, size_t *len);
/* Does an HTTP Accept header ask for this exposition? */
bool prom_proto_accepted(const char *accept);

#endif /* DLPROF_AGENT_PROM_PROTO_H */
