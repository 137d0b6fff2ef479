/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's series as one OTLP ExportMetricsServiceRequest (protobuf-c,
 * the OpenTelemetry .proto files in third_party/): a resource per
 * container (k8s.namespace.name, k8s.pod.name, container.id, with the
 * node's attributes) and in it, per function (code.function.name,
 * dlprof.library):
 *   dlprof.calls            Sum, monotonic, cumulative   {call}
 *   dlprof.call.duration    ExponentialHistogram, scale 4, cumulative   s
 *   dlprof.cpu.time         Sum, monotonic, cumulative   s (on-CPU time of the calls)
 *   dlprof.events           Sum, monotonic, cumulative, per dlprof.event
 * and, in the node's own resource, dlprof.agent.otlp.dropped (requests
 * the push gave up on). A pure function of what it is given: no I/O.
 */
#ifndef DLPROF_AGENT_OTLP_ENCODE_H
#define DLPROF_AGENT_OTLP_ENCODE_H

#include <stddef.h>
#include <stdint.h>

#include "agent/metrics_registry.h"

struct otlp_encode_opts {
	uint64_t start_unix_ns;		/* the cumulative series' start: the agent's */
	uint64_t now_unix_ns;
	const char *service_version;
	const char *host_name;		/* host.name */
	const char *node_name;		/* k8s.node.name; NULL: left out */
	const char *const *events;	/* the perf event names of series_values.events */
	size_t nr_events;
	uint64_t dropped;		/* requests dropped so far */
};

/* The request, packed (malloc'd, the caller's); NULL when out of memory. */
uint8_t *otlp_encode(const struct metrics_registry *r, const struct otlp_encode_opts *o, size_t *len);

#endif /* DLPROF_AGENT_OTLP_ENCODE_H */
