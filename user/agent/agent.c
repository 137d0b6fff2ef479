// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/agent.h"
#include "agent/agent_log.h"
#include "agent/agent_profile.h"
#include "agent/agent_self.h"
#include "agent/agent_target.h"
#include "agent/http_server.h"
#include "agent/metrics_registry.h"
#include "agent/otlp_encode.h"
#include "agent/otlp_push.h"
#include "agent/prom_proto.h"
#include "probe/session.h"
#include "util/clock.h"

/* The share of the time sampling windows hold their probes; how long each lasts is the attach mode's. */
#define MIN_DUTY 0.002
#define MAX_DUTY 0.2
/* At SIGTERM the last push gets this long to go out, so that a short run's calls all arrive. */
#define OTLP_LAST_PUSH_S 2.0
/* Without probes (a reload failed, the target went away), the agent tries again this often. */
#define RETRY_S 10.0

struct agent {
	const struct agent_opts *o;
	struct http_server *http;
	struct metrics_registry *reg;
	struct agent_profile *prof;
	struct agent_target target;
	struct agent_self self;
	char *events[DLPROF_MAX_EVENTS];	/* copies: the registry outlives the sessions */
	size_t nr_events;
	int sig_fd;
	int scrape_fd;			/* http_server__scrape_fd */
	int stats_fd;			/* held: the kernel counts the programs' run time (bpf_stats) */
	double next_tick;
	double next_retry;		/* while nothing is attached */
	bool published_ready;		/* the last exposition was published ready */
	bool scrape_waits;		/* a scrape waits for an exposition of now */
	struct kubelet_client_opts kubelet;	/* url NULL: not asked */
	char kubelet_url[512];
	struct otlp_push *otlp;		/* NULL: no --otlp-endpoint */
	double next_push;
	uint64_t start_unix_ns;		/* the pushed series' start */
	char host[256];
};

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	(void)level; (void)fmt; (void)args;
	return 0;
}

/* DLPROF_AGENT_TRAP_NS: one kernel cost of a probed call for every class, instead of the calibration's. */
static double trap_ns(void)
{
	const char *env = getenv("DLPROF_AGENT_TRAP_NS");
	double v = env ? strtod(env, NULL) : 0;

	return v > 0 ? v : 0;
}

/*
 * Why the agent is not ready (/readyz 503), NULL: ready. Ready once the
 * probes are attached and, with a budget, past the cold start: calls from
 * then on are counted exactly in the links.
 */
static const char *not_ready(const struct agent *a)
{
	if (!a->self.attached || !a->prof)
		return "nothing attached (a reload failed or the target went away), the agent tries again";
	if (!agent_profile__ready(a->prof))
		return "the cold start is measuring each function's cost";
	if (a->self.prof.follow_failures)
		return "a library named by path was replaced by a file that cannot be probed: its calls are not counted";
	return NULL;
}

/* The same exposition in protobuf, for the scrapers that ask for native histograms. */
static void publish_proto(struct agent *a)
{
	struct prom_buf pb = { .proto = prom_proto__new() };
	char *data;
	size_t len;

	if (!pb.proto)
		return;
	metrics_registry__render(a->reg, &pb);
	agent_self_render(&a->self, &pb);
	data = prom_proto__take(pb.proto, &len);
	if (data)
		http_server__publish_proto(a->http, data, len);
	prom_proto__free(pb.proto);
}

static uint64_t unix_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The series as they were at the last refresh, queued for the OTLP endpoint. */
static void push_otlp(struct agent *a)
{
	struct otlp_push_stats st;
	struct otlp_encode_opts eo = {
		.start_unix_ns = a->start_unix_ns,
		.now_unix_ns = unix_ns(),
		.service_version = DLPROF_VERSION,
		.host_name = a->host[0] ? a->host : NULL,
		.node_name = getenv("NODE_NAME"),
		.events = (const char *const *)a->events,
		.nr_events = a->nr_events,
	};
	uint8_t *data;
	size_t len;

	otlp_push__stats(a->otlp, &st);
	eo.dropped = st.dropped;
	data = otlp_encode(a->reg, &eo, &len);
	if (data)
		otlp_push__enqueue(a->otlp, data, len);
	else
		a->self.errors++;
	a->next_push = mono_seconds() + a->o->otlp_interval_s;
}

static void publish(struct agent *a)
{
	struct prom_buf b = {};
	const char *why;

	if (a->prof)
		agent_profile__stats(a->prof, &a->self.prof);
	if (a->otlp)
		otlp_push__stats(a->otlp, &a->self.otlp_st);
	a->self.series_exposed = metrics_registry__exposed(a->reg);
	a->self.series_folded = metrics_registry__folded(a->reg);
	{
		unsigned long bad;

		http_server__counts(a->http, &a->self.scrapes, &bad);
	}
	metrics_registry__render(a->reg, &b);
	agent_self_render(&a->self, &b);
	if (!b.failed && http_server__wants_proto(a->http))
		publish_proto(a);
	if (b.failed) {
		prom_buf_free(&b);
		return;		/* the last good exposition stays */
	}
	why = not_ready(a);
	http_server__publish(a->http, b.data, b.len, why);
	a->published_ready = !why;
	/* The scrape that asked is served this one: new series leave their zero (metrics_registry__served). */
	if (a->scrape_waits)
		metrics_registry__served(a->reg);
	a->scrape_waits = false;
}

static int start_profile(struct agent *a)
{
	const struct agent_opts *o = a->o;
	struct agent_profile_opts po = {
		.sel = o->sel,
		.attach_mode = o->attach_mode,
		.events = o->events,
		.budget_on = !o->no_budget,
		.budget = {
			.budget_ns_per_s = o->max_overhead_pct / 100.0 * 1e9,
			.min_duty = MIN_DUTY,
			.max_duty = MAX_DUTY,
		},
		.exact = o->exact,
		.nr_exact = o->nr_exact,
		.trap_ns = trap_ns(),
		.series_grace_s = o->series_grace_s,
		.callers = o->callers,
		.k8s_namespace = o->k8s_namespace,
		.k8s_pod = o->k8s_pod,
		.verbose = o->verbose,
	};
	struct agent_profile_stats st;
	char err[512];
	int ret;

	if (a->kubelet.url)
		po.kubelet = &a->kubelet;
	ret = agent_target_resolve(o, &a->target, err, sizeof(err));
	if (ret) {
		agent_log("error", "what=target msg=\"%s\"", err);
		return ret;
	}
	po.cgroups = a->target.cgroups.items;
	po.nr_cgroups = a->target.cgroups.cnt;
	a->prof = agent_profile__start(&po, a->reg, err, sizeof(err));
	if (!a->prof) {
		agent_log("error", "what=attach msg=\"%s\"", err);
		return -errno;
	}
	agent_profile__stats(a->prof, &st);
	agent_log("attach", "functions=%zu attached=%zu skipped=%zu libs=%zu mode=%s ms=%.1f targets=%zu budget_pct=%g",
		  st.functions, st.attached, st.skipped, o->sel.libs.cnt, st.attach_mode, st.attach_s * 1e3,
		  a->target.cgroups.cnt, o->no_budget ? 0 : o->max_overhead_pct);
	a->self.attached = true;
	return 0;
}

static void stop_profile(struct agent *a)
{
	double t0 = mono_seconds();

	if (!a->prof)
		return;
	agent_profile__free(a->prof);
	a->prof = NULL;
	a->self.attached = false;
	a->self.last_detach_s = mono_seconds() - t0;
	agent_target_free(&a->target);
}

/* The registry needs the event names before the first session: a first session tells them. */
static int make_registry(struct agent *a)
{
	struct agent_profile_stats st;

	agent_profile__stats(a->prof, &st);
	for (size_t e = 0; e < st.nr_events; e++) {
		a->events[e] = strdup(st.events[e]);
		if (!a->events[e])
			return -ENOMEM;
		a->nr_events++;
	}
	metrics_registry__set_events(a->reg, (const char *const *)a->events, a->nr_events);
	return 0;
}

static void tick(struct agent *a, bool final)
{
	int ret;

	if (a->prof) {
		ret = agent_profile__tick(a->prof, mono_seconds(), final);
		/* A window or scan is open (0.1 s at most): the refresh follows its close, not a whole interval later. */
		if (ret == -EAGAIN) {
			a->next_tick = mono_seconds() + agent_profile__check_s(a->prof);
			return;
		}
		if (ret) {
			a->self.errors++;
			agent_log("error", "what=read msg=\"%s\"", strerror(-ret));
		}
	}
	publish(a);
	a->next_tick = mono_seconds() + a->o->refresh_s;
}

/*
 * A scrape asked: the series of now, published, once no window is open
 * (its reads and these must not interleave); a scrape would otherwise see
 * them as they were at the last refresh, up to --refresh old, and an
 * increase() over its interval would be off by that much of its rate.
 */
static void serve_scrape(struct agent *a)
{
	int ret = 0;

	if (!a->scrape_waits)
		return;
	if (a->prof) {
		ret = agent_profile__fresh(a->prof);
		if (ret == -EAGAIN)
			return;
	}
	if (ret) {
		a->self.errors++;
		agent_log("error", "what=read msg=\"%s\"", strerror(-ret));
	}
	publish(a);
}

/* Over budget between refreshes: functions out of the links now, the series at the refresh. */
static void react(struct agent *a, double now)
{
	int ret = agent_profile__react(a->prof, now);

	if (ret) {
		a->self.errors++;
		agent_log("error", "what=read msg=\"%s\"", strerror(-ret));
	}
}

/* Probes out (counts kept), then in again as the options say now. */
static void restart(struct agent *a)
{
	char old_container[K8S_CONTAINER_ID_MAX + 1];

	snprintf(old_container, sizeof(old_container), "%s", a->target.labelled ? a->target.meta.ids.container_id : "");
	if (a->prof)
		agent_profile__tick(a->prof, mono_seconds(), true);
	stop_profile(a);
	metrics_registry__rebase(a->reg);
	if (start_profile(a))
		a->self.errors++;
	/* Another container now (a restart is a new id): the old one's series go, before any new one is made. */
	if (a->prof && strcmp(old_container, a->target.labelled ? a->target.meta.ids.container_id : ""))
		metrics_registry__clear(a->reg);
	a->next_retry = mono_seconds() + RETRY_S;
	publish(a);
}

static void reload(struct agent *a)
{
	agent_log("reload", "libs=%zu", a->o->sel.libs.cnt);
	a->self.reloads++;
	restart(a);
}

/* A target cgroup removed (its container stopped): its probes count nothing any more. */
static bool target_gone(struct agent *a)
{
	for (size_t i = 0; a->prof && i < a->target.cgroups.cnt; i++)
		if (access(a->target.cgroups.items[i], F_OK) && errno == ENOENT) {
			agent_log("target_gone", "cgroup=%s", a->target.cgroups.items[i]);
			return true;
		}
	return false;
}

static int open_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* Until SIGTERM/SIGINT: reads on the refresh, windows and the cheap budget check between. */
static int loop(struct agent *a)
{
	for (;;) {
		double now = mono_seconds(), next = a->next_tick;
		struct signalfd_siginfo si;
		/* The signals, and the copies of the libraries that containers bring and take (docs/containers.md). */
		struct pollfd pfd[3] = { { .fd = a->sig_fd, .events = POLLIN },
					 { .fd = a->prof ? agent_profile__poll_fd(a->prof) : -1, .events = POLLIN },
					 { .fd = a->scrape_fd, .events = POLLIN } };
		uint64_t asks;
		int timeout_ms;

		if (a->otlp && a->next_push < next)
			next = a->next_push;
		if (a->prof) {
			double w = agent_profile__windows(a->prof, now);

			if (w < next)
				next = w;
			if (!a->o->no_budget && now + agent_profile__check_s(a->prof) < next)
				next = now + agent_profile__check_s(a->prof);
		}
		/* Asked for at the last wakeup, or waiting for the window that may have closed just now. */
		serve_scrape(a);
		/* From now: opening a window takes ms, and its first check is due 1 ms after it. */
		now = mono_seconds();
		timeout_ms = next > now ? (int)ceil((next - now) * 1e3) : 0;
		if (poll(pfd, 3, timeout_ms) < 0 && errno != EINTR)
			return -errno;
		if ((pfd[2].revents & POLLIN) && read(a->scrape_fd, &asks, sizeof(asks)) == sizeof(asks))
			a->scrape_waits = true;
		if (a->prof && (pfd[1].revents & POLLIN))
			agent_profile__drain(a->prof);
		while (read(a->sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGHUP) {
				reload(a);
				continue;
			}
			agent_log("stop", "signal=%s", si.ssi_signo == SIGTERM ? "TERM" : "INT");
			return 0;
		}
		now = mono_seconds();
		if (now >= a->next_tick && (target_gone(a) || (!a->prof && now >= a->next_retry)))
			restart(a);
		if (a->otlp && now >= a->next_push)
			push_otlp(a);
		if (now >= a->next_tick || (a->prof && agent_profile__plan_due(a->prof)))
			tick(a, false);
		/* Ready (the first plan's links in) is said at once, not at the next refresh. */
		else if (!a->published_ready && a->prof && !not_ready(a))
			publish(a);
		else if (a->prof && agent_profile__over_budget(a->prof, now))
			react(a, now);
	}
}

static void agent_free(struct agent *a)
{
	stop_profile(a);
	otlp_push__free(a->otlp);
	http_server__free(a->http);
	metrics_registry__free(a->reg);
	for (size_t e = 0; e < a->nr_events; e++)
		free(a->events[e]);
	if (a->sig_fd >= 0)
		close(a->sig_fd);
	if (a->stats_fd >= 0)
		close(a->stats_fd);
}

int agent_run(const struct agent_opts *o)
{
	struct agent a = { .o = o, .sig_fd = -1, .scrape_fd = -1, .stats_fd = -1 };
	char msg[512];
	int ret, status = 1;

	libbpf_set_print(libbpf_quiet);
	agent_log_engine_messages();
	if (session_preflight(msg, sizeof(msg))) {
		agent_log("error", "what=preflight msg=\"%s\"", msg);
		return 1;
	}
	/*
	 * The budget weighs the probes by their measured run time. An fd from
	 * BPF_ENABLE_STATS (kernel 5.8) counts only while held, and leaves
	 * the kernel.bpf_stats_enabled sysctl alone.
	 */
	a.stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (a.stats_fd < 0)
		agent_log("warning", "what=bpf_stats msg=\"cannot enable BPF run-time stats (%s): the budget uses the calibrated cost per call\"",
			  strerror(errno));
	if (o->kubelet_url || o->kubelet_token) {
		const char *node = getenv("NODE_NAME");

		if (!o->kubelet_url && !node) {
			agent_log("error", "what=kubelet msg=\"a kubelet token without --kubelet-url: set NODE_NAME (the downward API's spec.nodeName) or give --kubelet-url\"");
			return 2;
		}
		snprintf(a.kubelet_url, sizeof(a.kubelet_url), o->kubelet_url ? "%s" : "https://%s:10250",
			 o->kubelet_url ? o->kubelet_url : node);
		a.kubelet = (struct kubelet_client_opts){ a.kubelet_url, o->kubelet_token, o->kubelet_ca };
		agent_log("kubelet", "url=%s token=%s", a.kubelet_url, o->kubelet_token ? o->kubelet_token : "-");
	}
	a.sig_fd = open_signals();
	if (a.sig_fd < 0)
		return 1;
	a.http = http_server__start(o->listen, msg, sizeof(msg));
	if (!a.http) {
		agent_log("error", "what=listen msg=\"%s\"", msg);
		goto cleanup;
	}
	agent_log("listen", "address=%s port=%u", o->listen, http_server__port(a.http));
	a.scrape_fd = http_server__scrape_fd(a.http);
	a.reg = metrics_registry__new((size_t)o->max_series, NULL, 0);
	if (!a.reg)
		goto cleanup;
	if (o->otlp_url) {
		a.otlp = otlp_push__new(&(struct otlp_push_opts){ o->otlp_url, o->otlp_headers, o->otlp_ca },
					msg, sizeof(msg));
		if (!a.otlp) {
			agent_log("error", "what=otlp msg=\"%s\"", msg);
			goto cleanup;
		}
		a.self.otlp = true;
		a.start_unix_ns = unix_ns();
		a.next_push = mono_seconds() + o->otlp_interval_s;
		if (gethostname(a.host, sizeof(a.host)))
			a.host[0] = '\0';
		agent_log("otlp", "url=%s interval_s=%g", o->otlp_url, o->otlp_interval_s);
	}
	/* Until the first publish, /healthz and /readyz say 503 and /metrics has nothing to say. */
	ret = start_profile(&a);
	if (ret)
		goto cleanup;
	ret = make_registry(&a);
	if (ret)
		goto cleanup;
	tick(&a, false);
	ret = loop(&a);
	/* The flush: the last counts read and served (and pushed) before the probes go. */
	tick(&a, true);
	if (a.otlp) {
		push_otlp(&a);
		otlp_push__drain(a.otlp, OTLP_LAST_PUSH_S);
	}
	agent_log("flush", "series=%zu folded=%llu", metrics_registry__exposed(a.reg),
		  (unsigned long long)metrics_registry__folded(a.reg));
	status = ret ? 1 : 0;
cleanup:
	agent_free(&a);
	return status;
}
