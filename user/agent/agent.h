/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The node agent: a long-running profile served as Prometheus metrics
 * (docs/agent.md). Started by "dlprof-bpf agent" (cmd/cmd_agent.c), which
 * turns flags and environment into these options.
 */
#ifndef DLPROF_AGENT_H
#define DLPROF_AGENT_H

#include <stdbool.h>
#include <stddef.h>

#include "probe/probe_table.h"

#define AGENT_MAX_OVERHEAD_PCT_DEFAULT 1.0
#define AGENT_MAX_SERIES_DEFAULT 2000
#define AGENT_REFRESH_S_DEFAULT 1.0
#define AGENT_SERIES_GRACE_S_DEFAULT 300.0
/* OpenTelemetry's default metric export interval (OTEL_METRIC_EXPORT_INTERVAL). */
#define AGENT_OTLP_INTERVAL_S_DEFAULT 60.0

struct agent_opts {
	struct probe_selection sel;	/* borrowed */
	int attach_mode;
	const char *events;		/* NULL: the default set */
	char *const *cgroups;		/* --cgroup, as given */
	size_t nr_cgroups;
	char *const *containers;	/* --container id prefixes */
	size_t nr_containers;
	const char *listen;		/* ADDR:PORT */
	double max_overhead_pct;	/* of one CPU */
	bool no_budget;
	char *const *exact;		/* --exact globs */
	size_t nr_exact;
	long max_series;
	double refresh_s;
	double series_grace_s;		/* a removed container's series stay this long */
	long callers;			/* --callers: the caller label's named callers per function; -1: all; 0: off */
	const char *k8s_namespace;	/* globs: only containers of matching pods; NULL: any */
	const char *k8s_pod;
	const char *kubelet_url;	/* NULL: none, unless a token is given (then https://$NODE_NAME:10250) */
	const char *kubelet_token;	/* a bearer token file */
	const char *kubelet_ca;		/* a CA file, "insecure", or NULL: the system's */
	const char *otlp_url;		/* the OTLP/HTTP metrics endpoint, whole; NULL: no push */
	const char *otlp_headers;	/* OTEL_EXPORTER_OTLP_HEADERS' form */
	const char *otlp_ca;		/* CA file of the endpoint's certificate; NULL: the system's */
	double otlp_interval_s;
	int verbose;
};

/* Runs until SIGTERM or SIGINT; the process's exit status. */
int agent_run(const struct agent_opts *o);

#endif /* DLPROF_AGENT_H */
