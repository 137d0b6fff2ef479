/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * OTLP/HTTP push (protobuf) of encoded requests (otlp_encode.h) on a
 * thread of its own, so that a slow or absent collector never holds the
 * agent's loop. Requests wait in a bounded queue: when the endpoint is
 * down the thread retries the oldest with exponential backoff, and a
 * request that finds the queue full pushes the oldest out (counted as
 * dropped). The series are cumulative, so the next request that gets
 * through carries every call the dropped ones did. An endpoint that
 * refuses a request (a 4xx but 429) makes it dropped at once.
 */
#ifndef DLPROF_AGENT_OTLP_PUSH_H
#define DLPROF_AGENT_OTLP_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Requests held while the endpoint is down; past it the oldest goes. */
#define OTLP_QUEUE_MAX 5
#define OTLP_BACKOFF_FIRST_S 0.5
#define OTLP_BACKOFF_MAX_S 5.0
/* Headers OTEL_EXPORTER_OTLP_HEADERS may give. */
#define OTLP_MAX_HEADERS 32
/* One attempt, connection included. */
#define OTLP_TIMEOUT_S 10

struct otlp_push_opts {
	const char *url;		/* the metrics endpoint, whole (…/v1/metrics) */
	const char *headers;		/* OTEL_EXPORTER_OTLP_HEADERS' form: k=v,k2=v2 (values %-encoded); NULL: none */
	const char *ca_file;		/* the endpoint's CA for https; NULL: the system's */
};

struct otlp_push_stats {
	uint64_t sent;		/* requests the endpoint took */
	uint64_t dropped;	/* pushed out of a full queue, or refused */
	uint64_t failures;	/* attempts that failed (each retry counts) */
};

struct otlp_push;

/* NULL with a one-line message in err (bad headers, no memory, no thread). */
struct otlp_push *otlp_push__new(const struct otlp_push_opts *o, char *err, size_t err_sz);
/* Queue a request (taken over, malloc'd). */
void otlp_push__enqueue(struct otlp_push *p, uint8_t *data, size_t len);
void otlp_push__stats(struct otlp_push *p, struct otlp_push_stats *st);
/* Waits until every queued request is sent or given up, at most timeout_s. */
void otlp_push__drain(struct otlp_push *p, double timeout_s);
/* Stops the thread: a request in flight is given up to OTLP_TIMEOUT_S, queued ones are dropped. */
void otlp_push__free(struct otlp_push *p);

/*
 * The metrics endpoint from a base URL as OTEL_EXPORTER_OTLP_ENDPOINT
 * gives it: "v1/metrics" appended to its path (unless it ends so already).
 * -EINVAL when it is not http:// or https://, -ENAMETOOLONG past sz.
 */
int otlp_metrics_url(const char *base, char *buf, size_t sz);
/*
 * One "Name: value" line per k=v pair of OTEL_EXPORTER_OTLP_HEADERS (value
 * %-decoded, spaces around both trimmed), into lines[0..max); how many, or
 * -EINVAL for a pair without '=' or a name that is no HTTP token. Each
 * line is malloc'd, the caller's.
 */
int otlp_header_lines(const char *headers, char **lines, size_t max);

#endif /* DLPROF_AGENT_OTLP_PUSH_H */
