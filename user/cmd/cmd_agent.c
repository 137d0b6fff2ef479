// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/http_server.h"
#include "agent/otlp_push.h"
#include "cmd/cli.h"
#include "cmd/cmd_agent.h"
#include "cmd/version.h"
#include "probe/session.h"
#include "util/messages.h"


/*
 * The environment's fallbacks for the agent's flags (docs/agent.md): a
 * variable counts only where its flag is not on the command line. Lists
 * are comma-separated, as the flags take them.
 */
static const struct {
	const char *env;
	const char *flag;	/* long name */
	char short_flag;	/* 0: none */
} env_flags[] = {
	{ "DLPROF_AGENT_LIBS", "lib", 'l' },
	{ "DLPROF_AGENT_FUNCS", "func", 'f' },
	{ "DLPROF_AGENT_EXCLUDE", "exclude", 'x' },
	{ "DLPROF_AGENT_CONTAINER", "container", 0 },
	{ "DLPROF_AGENT_CGROUP", "cgroup", 0 },
	{ "DLPROF_AGENT_LISTEN", "listen", 0 },
	{ "DLPROF_AGENT_MAX_OVERHEAD", "max-overhead", 0 },
	{ "DLPROF_AGENT_EXACT", "exact", 0 },
	{ "DLPROF_AGENT_MAX_SERIES", "max-series", 0 },
	{ "DLPROF_AGENT_REFRESH", "refresh", 0 },
	{ "DLPROF_AGENT_SERIES_GRACE", "series-grace", 0 },
	{ "DLPROF_AGENT_CALLERS", "callers", 0 },
	{ "DLPROF_AGENT_NAMESPACE", "namespace", 0 },
	{ "DLPROF_AGENT_POD", "pod", 0 },
	{ "DLPROF_AGENT_KUBELET_URL", "kubelet-url", 0 },
	{ "DLPROF_AGENT_KUBELET_TOKEN", "kubelet-token", 0 },
	{ "DLPROF_AGENT_KUBELET_CA", "kubelet-ca", 0 },
	{ "DLPROF_AGENT_EVENTS", "event", 'e' },
	{ "DLPROF_AGENT_ATTACH", "attach", 0 },
	{ "OTEL_EXPORTER_OTLP_ENDPOINT", "otlp-endpoint", 0 },
};

#define NR_ENV_FLAGS (sizeof(env_flags) / sizeof(env_flags[0]))

static bool flag_given(int argc, char **argv, const char *flag, char short_flag)
{
	size_t n = strlen(flag);

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *a = argv[i];

		if (a[0] == '-' && a[1] == '-' && !strncmp(a + 2, flag, n) && (!a[2 + n] || a[2 + n] == '='))
			return true;
		if (short_flag && a[0] == '-' && a[1] == short_flag)
			return true;
	}
	return false;
}

/* argv with "--flag value" put in front for each variable whose flag is absent. */
static char **with_env(int argc, char **argv, int *out_argc, bool *used)
{
	char **v = calloc((size_t)argc + 2 * NR_ENV_FLAGS + 1, sizeof(*v));
	int n = 0;

	if (!v)
		return NULL;
	v[n++] = argv[0];
	for (size_t i = 0; i < NR_ENV_FLAGS; i++) {
		const char *val = getenv(env_flags[i].env);
		char *opt;

		if (!val || !*val || flag_given(argc, argv, env_flags[i].flag, env_flags[i].short_flag))
			continue;
		if (asprintf(&opt, "--%s=%s", env_flags[i].flag, val) < 0)
			continue;
		v[n++] = opt;
		used[i] = true;
	}
	for (int i = 1; i < argc; i++)
		v[n++] = argv[i];
	*out_argc = n;
	return v;
}

static void free_env_argv(char **v, int argc, int orig_argc)
{
	for (int i = 1; i < argc - orig_argc + 1; i++)
		free(v[i]);
	free(v);
}

/* Where the bad value came from, when a variable gave it. */
static const char *from_env(const char *err, const bool *used)
{
	static char note[64];

	for (size_t i = 0; i < NR_ENV_FLAGS; i++) {
		size_t n = strlen(env_flags[i].flag);

		if (used[i] && !strncmp(err, "--", 2) && !strncmp(err + 2, env_flags[i].flag, n) && err[2 + n] == ':') {
			snprintf(note, sizeof(note), " (from %s)", env_flags[i].env);
			return note;
		}
	}
	return "";
}

/* OpenTelemetry's variables: the signal's own (…_METRICS_…) before the general one. */
static const char *otel_env(const char *metrics_name, const char *name)
{
	const char *v = getenv(metrics_name);

	return v && *v ? v : getenv(name) && *getenv(name) ? getenv(name) : NULL;
}

/*
 * The OTLP push's settings from --otlp-endpoint and OpenTelemetry's
 * variables (docs/agent.md): the flag, else OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
 * as it is, else OTEL_EXPORTER_OTLP_ENDPOINT (which became the flag).
 * Non-zero after a one-line message when one is bad.
 */
static int otlp_options(int argc, char **argv, const struct profile_opts *opts, struct agent_opts *ao,
			char *url, size_t url_sz)
{
	const char *whole = getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT");
	const char *interval_ms = getenv("OTEL_METRIC_EXPORT_INTERVAL");
	char *lines[OTLP_MAX_HEADERS];
	int n;

	if (whole && *whole && !flag_given(argc, argv, "otlp-endpoint", 0)) {
		if (strncmp(whole, "http://", 7) && strncmp(whole, "https://", 8)) {
			errmsg("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '%s' is not an http:// or https:// URL", whole);
			return -1;
		}
		snprintf(url, url_sz, "%s", whole);
	} else if (!opts->otlp_endpoint) {
		return 0;
	} else if (otlp_metrics_url(opts->otlp_endpoint, url, url_sz)) {
		errmsg("--otlp-endpoint: '%s' is too long", opts->otlp_endpoint);
		return -1;
	}
	ao->otlp_url = url;
	ao->otlp_headers = otel_env("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS");
	ao->otlp_ca = otel_env("OTEL_EXPORTER_OTLP_METRICS_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE");
	ao->otlp_interval_s = opts->otlp_interval_s ?: AGENT_OTLP_INTERVAL_S_DEFAULT;
	if (!opts->otlp_interval_s && interval_ms && *interval_ms) {
		char *end;
		double ms = strtod(interval_ms, &end);

		if (*end || !(ms > 0)) {
			errmsg("OTEL_METRIC_EXPORT_INTERVAL: '%s' is not a positive number of milliseconds", interval_ms);
			return -1;
		}
		ao->otlp_interval_s = ms / 1e3;
	}
	/* Checked here, so that a bad variable stops the agent before it attaches. */
	n = otlp_header_lines(ao->otlp_headers, lines, OTLP_MAX_HEADERS);
	if (n < 0) {
		errmsg("OTEL_EXPORTER_OTLP_HEADERS: '%s' is not name=value[,name=value...] with at most %d names",
		       ao->otlp_headers, OTLP_MAX_HEADERS);
		return -1;
	}
	while (n)
		free(lines[--n]);
	if (ao->otlp_ca && access(ao->otlp_ca, R_OK)) {
		errmsg("OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read '%s': %s", ao->otlp_ca, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	struct profile_opts opts;
	struct agent_opts ao;
	bool env_used[NR_ENV_FLAGS] = {};
	char err[512], otlp_url[2048];
	int full_argc, status;
	char **full = with_env(argc, argv, &full_argc, env_used);

	if (!full)
		return 1;
	if (cli_parse_cmd(CLI_AGENT, full_argc, full, &opts, err, sizeof(err))) {
		errmsg("%s%s", err, from_env(err, env_used));
		status = EXIT_USAGE;
		goto cleanup;
	}
	if (opts.help || opts.version || opts.list_events) {
		if (opts.version && !opts.help)
			version_print(stdout, opts.verbose);
		else if (!opts.help)
			session_list_events(stdout);
		status = opts.help ? CMD_HELP : 0;
		goto cleanup;
	}
	if (!opts.libs.cnt) {
		errmsg("no library given: use --lib LIB or DLPROF_AGENT_LIBS=LIB[,LIB...]");
		status = EXIT_USAGE;
		goto cleanup;
	}
	ao = (struct agent_opts){
		.attach_mode = opts.attach_mode,
		.events = opts.events,
		.cgroups = opts.cgroups.items,
		.nr_cgroups = opts.cgroups.cnt,
		.containers = opts.containers.items,
		.nr_containers = opts.containers.cnt,
		.listen = opts.listen ?: HTTP_LISTEN_DEFAULT,
		.max_overhead_pct = opts.max_overhead_pct ?: AGENT_MAX_OVERHEAD_PCT_DEFAULT,
		.no_budget = opts.no_budget,
		.exact = opts.exact.items,
		.nr_exact = opts.exact.cnt,
		.max_series = opts.max_series ?: AGENT_MAX_SERIES_DEFAULT,
		.refresh_s = opts.refresh_s ?: AGENT_REFRESH_S_DEFAULT,
		.series_grace_s = opts.series_grace_s ?: AGENT_SERIES_GRACE_S_DEFAULT,
		.callers = opts.callers,
		.k8s_namespace = opts.k8s_namespace,
		.k8s_pod = opts.k8s_pod,
		.kubelet_url = opts.kubelet_url,
		.kubelet_token = opts.kubelet_token,
		.kubelet_ca = opts.kubelet_ca,
		.verbose = opts.verbose,
	};
	cli_selection(&opts, &ao.sel);
	if (otlp_options(argc, argv, &opts, &ao, otlp_url, sizeof(otlp_url))) {
		status = EXIT_USAGE;
		goto cleanup;
	}
	status = agent_run(&ao);
cleanup:
	cli_opts_free(&opts);
	free_env_argv(full, full_argc, argc);
	return status;
}
