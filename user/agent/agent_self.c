// SPDX-License-Identifier: GPL-2.0-only
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "agent/agent_self.h"
#include "model/probe_class.h"

static void gauge(struct prom_buf *b, const char *name, const char *type, const char *help, double v)
{
	prom_family(b, name, type, help);
	prom_sample(b, name, NULL, 0, NULL, NULL, v);
}

/* The agent's own resident memory, from /proc/self/statm. */
static double resident_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return (double)resident * 4096.0;
}

static double own_cpu_s(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static void functions(const struct agent_self *a, struct prom_buf *b)
{
	const struct agent_profile_stats *p = &a->prof;
	struct prom_label l = { "state", NULL };

	prom_family(b, "dlprof_agent_functions", "gauge",
		    "Functions selected, by state: attached (in the links), sampled (in windows), detached (the kernel refused them)");
	l.value = "attached";
	prom_sample(b, "dlprof_agent_functions", &l, 1, NULL, NULL, (double)(a->attached ? p->attached : 0));
	l.value = "sampled";
	prom_sample(b, "dlprof_agent_functions", &l, 1, NULL, NULL, (double)p->sampled);
	l.value = "detached";
	prom_sample(b, "dlprof_agent_functions", &l, 1, NULL, NULL, (double)p->skipped);
}

/* The kernel's part of a probed call per class, as the session's calibration found it at start. */
static void trap_costs(const struct agent_profile_stats *p, struct prom_buf *b)
{
	struct prom_label l = { "class", NULL };

	prom_family(b, "dlprof_agent_trap_cost_seconds", "gauge",
		    "The kernel's part of one probed call (trap, return trampoline) by class of probed instruction, "
		    "calibrated at start");
	for (int c = 0; c < DLPROF_PROBE_CLASSES; c++) {
		l.value = probe_class_name((enum dlprof_probe_class)c);
		prom_sample(b, "dlprof_agent_trap_cost_seconds", &l, 1, NULL, NULL, p->trap_ns[c] / 1e9);
	}
}

/* What the linked functions cost the processes that map their libraries; no sample where not measured. */
static void install_costs(const struct agent_profile_stats *p, struct prom_buf *b)
{
	if (p->install_measured) {
		gauge(b, "dlprof_agent_install_cost_seconds", "gauge",
		      "What one linked function adds to each process's mapping of its library (its breakpoint written), "
		      "timed on the agent's own mapping at start",
		      p->install_ns / 1e9);
		gauge(b, "dlprof_agent_install_seconds_per_second", "gauge",
		      "What the functions in the links cost the processes that map their libraries, per second",
		      p->install_ns_per_s / 1e9);
	}
	if (p->mappings_counted)
		gauge(b, "dlprof_agent_library_mappings_total", "counter",
		      "Processes that mapped a probed library (each paid for its breakpoints)", (double)p->mappings);
}

void agent_self_render(const struct agent_self *a, struct prom_buf *b)
{
	const struct agent_profile_stats *p = &a->prof;
	/* Which durations the series hold, as every front end says it: compensated or raw. */
	struct prom_label info[3] = { { "version", DLPROF_VERSION }, { "attach_mode", p->attach_mode ?: "none" },
				      { "latency", !p->attach_mode ? "none" : p->compensated ? "compensated" : "raw" } };

	prom_family(b, "dlprof_agent_info", "gauge",
		    "The agent's version, attach mode and durations (compensated: less the probes' own cost)");
	prom_sample(b, "dlprof_agent_info", info, 3, NULL, NULL, 1);
	gauge(b, "dlprof_agent_up", "gauge", "1 while the probes are attached", a->attached);
	functions(a, b);
	gauge(b, "dlprof_agent_dropped_records_total", "counter",
	      "Calls the kernel counted but could not time (no per-thread storage); not in the duration histogram",
	      (double)p->dropped);
	gauge(b, "dlprof_agent_orphan_returns_total", "counter",
	      "Returns seen without their entry (calls in flight at attach)", (double)p->orphan_returns);
	gauge(b, "dlprof_agent_probe_seconds_total", "counter",
	      "Time spent in the probe programs (bpf_stats run_time_ns), of this session", (double)p->probe_run_ns / 1e9);
	gauge(b, "dlprof_agent_probe_runs_total", "counter", "Runs of the probe programs (bpf_stats)", (double)p->probe_runs);
	gauge(b, "dlprof_agent_attach_seconds", "gauge", "How long the last attach took", p->attach_s);
	gauge(b, "dlprof_agent_detach_seconds", "gauge", "How long the last detach took (a reload's)", a->last_detach_s);
	gauge(b, "dlprof_agent_budget_seconds_per_second", "gauge",
	      "The overhead budget: CPU seconds per second the probes may cost (0: no budget)", p->budget_ns_per_s / 1e9);
	gauge(b, "dlprof_agent_budget_ratio", "gauge",
	      "Share of the budget the current plan uses (probes' estimated cost / budget)",
	      p->budget_ns_per_s > 0 ? p->expected_ns_per_s / p->budget_ns_per_s : 0);
	gauge(b, "dlprof_agent_call_cost_seconds", "gauge",
	      "Estimated cost of one probed call of the functions in the links: the trap's part and the programs' measured time",
	      p->call_cost_ns / 1e9);
	trap_costs(p, b);
	install_costs(p, b);
	gauge(b, "dlprof_agent_sampled_call_cost_seconds", "gauge",
	      "Cost of one call of the sampled functions, measured: the kernel time their windows added, per call",
	      p->sampled_call_cost_ns / 1e9);
	gauge(b, "dlprof_agent_relinks_total", "counter", "Times the links were re-created to follow the budget",
	      (double)p->relinks);
	gauge(b, "dlprof_agent_relink_seconds_total", "counter", "Time spent re-creating the links (reads, detach, attach)",
	      p->relink_s_total);
	gauge(b, "dlprof_agent_relink_gap_seconds_total", "counter",
	      "Time a library copy's links were out while re-created: its calls then were not seen", p->relink_gap_s_total);
	gauge(b, "dlprof_agent_sampling_windows_total", "counter", "Sampling windows opened", (double)p->windows);
	gauge(b, "dlprof_agent_sampling_window_seconds_total", "counter", "Time the sampling windows lasted",
	      p->window_s_total);
	gauge(b, "dlprof_agent_sampled_unsteady_calls_total", "counter",
	      "Calls the sampled series hold from windows whose rate was not close to the last one's (a burst "
	      "began or ended): estimates of a rate that did not hold between the windows", p->unsteady_calls);
	gauge(b, "dlprof_agent_scan_windows_total", "counter",
	      "Scans opened: windows over the sampled functions no window has seen called", (double)p->scans);
	gauge(b, "dlprof_agent_scan_window_seconds_total", "counter", "Time the scans lasted", p->scan_s_total);
	gauge(b, "dlprof_agent_copy_attach_failures_total", "counter",
	      "Copies of the libraries (in containers) whose probes could not be attached: their calls are not counted",
	      (double)p->copy_attach_failures);
	gauge(b, "dlprof_agent_library_follow_failures", "gauge",
	      "Libraries named by path that were replaced by a file that could not be probed (or whose directory "
	      "could not be watched): their calls are not counted", (double)p->follow_failures);
	gauge(b, "dlprof_agent_idle_copies", "gauge",
	      "Copies of the libraries kept attached while no process maps them: a container of their image is counted "
	      "from its first call", (double)p->idle_copies);
	gauge(b, "dlprof_agent_copy_discovery_lost_total", "counter",
	      "Events of copy discovery the kernel had no room for: a copy first mapped then is found at its next mapping",
	      (double)p->discovery_lost);
	gauge(b, "dlprof_agent_series", "gauge", "Function label sets exposed", (double)a->series_exposed);
	gauge(b, "dlprof_agent_series_folded_total", "counter",
	      "Label sets folded into function=\"__other__\" by --max-series", (double)a->series_folded);
	gauge(b, "dlprof_agent_containers", "gauge", "Containers (and the host) the function series are kept for",
	      (double)p->containers);
	gauge(b, "dlprof_agent_series_retired_total", "counter",
	      "Series dropped because their container was removed (after --series-grace)", (double)p->series_retired);
	gauge(b, "dlprof_agent_group_overflow_total", "counter",
	      "Calls counted for their function but in no container's series (the kernel's group map was full)",
	      (double)p->group_overflow);
	gauge(b, "dlprof_agent_kubelet_errors_total", "counter", "Requests for the kubelet's pod list that failed",
	      (double)p->kubelet_errors);
	gauge(b, "dlprof_agent_reloads_total", "counter", "Reloads (SIGHUP)", (double)a->reloads);
	gauge(b, "dlprof_agent_errors_total", "counter", "Errors logged (attach, read, window)", (double)a->errors);
	gauge(b, "dlprof_agent_scrapes_total", "counter", "Scrapes of /metrics served", (double)a->scrapes);
	if (a->otlp) {
		gauge(b, "dlprof_agent_otlp_sent_total", "counter", "OTLP export requests the endpoint took",
		      (double)a->otlp_st.sent);
		gauge(b, "dlprof_agent_otlp_dropped_total", "counter",
		      "OTLP export requests dropped: the queue was full while the endpoint was down, or it refused them",
		      (double)a->otlp_st.dropped);
		gauge(b, "dlprof_agent_otlp_failures_total", "counter",
		      "OTLP export attempts that failed and were retried (the endpoint down or busy)",
		      (double)a->otlp_st.failures);
	}
	gauge(b, "dlprof_agent_cpu_seconds_total", "counter", "CPU time of the agent process itself", own_cpu_s());
	gauge(b, "dlprof_agent_resident_memory_bytes", "gauge", "Resident memory of the agent process", resident_bytes());
}
