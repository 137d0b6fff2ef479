// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include "probe/events.h"

#define HW(n, c, h) { n, PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c, true, TASK_CTR_NONE, h }
/* Software events the kernel also counts in task_struct: read there, exact and cheap. */
#define TASK(n, c, t, h) { n, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c, false, TASK_CTR_##t, h }

static const struct event_def events[] = {
	HW("cycles", CPU_CYCLES, "CPU cycles"),
	HW("instructions", INSTRUCTIONS, "instructions retired"),
	HW("cache-references", CACHE_REFERENCES, "last-level cache accesses"),
	HW("cache-misses", CACHE_MISSES, "last-level cache misses"),
	HW("branch-instructions", BRANCH_INSTRUCTIONS, "branches retired"),
	HW("branch-misses", BRANCH_MISSES, "mispredicted branches"),
	HW("ref-cycles", REF_CPU_CYCLES, "cycles at the reference (TSC) rate"),
	TASK("page-faults", PAGE_FAULTS, FAULTS, "page faults, minor and major"),
	TASK("minor-faults", PAGE_FAULTS_MIN, MIN_FAULTS, "page faults served without I/O"),
	TASK("major-faults", PAGE_FAULTS_MAJ, MAJ_FAULTS, "page faults that needed I/O"),
	TASK("context-switches", CONTEXT_SWITCHES, SWITCHES, "times the thread was switched out"),
	TASK("cpu-migrations", CPU_MIGRATIONS, MIGRATIONS, "moves of the thread to another CPU"),
};

#define NR_EVENTS (sizeof(events) / sizeof(events[0]))

const struct event_def *event_table(size_t *cnt)
{
	*cnt = NR_EVENTS;
	return events;
}

const struct event_def *event_find(const char *name)
{
	for (size_t i = 0; i < NR_EVENTS; i++)
		if (!strcmp(events[i].name, name))
			return &events[i];
	return NULL;
}

static int perf_open(const struct event_def *ev, int cpu)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = ev->type,
		.config = ev->config,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, -1 /* pid: all */, cpu, -1 /* group */,
			      PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

int event_probe(const struct event_def *ev)
{
	int fd;

	if (ev->task)
		return 0;
	fd = perf_open(ev, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

static int no_pmu_reason(int err)
{
	/* What perf_event_open says for a hardware event without a PMU. */
	return err == -ENOENT || err == -EOPNOTSUPP || err == -ENODEV;
}

int event_set_parse(struct event_set *set, const char *list, char *err, size_t err_sz)
{
	const char *p = list;

	memset(set, 0, sizeof(*set));
	while (*p) {
		size_t len = strcspn(p, ",");
		char name[64];
		const struct event_def *ev;
		int e;

		if (!len || len >= sizeof(name)) {
			snprintf(err, err_sz, "-e: bad event list '%s'; see -e list", list);
			return -EINVAL;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		ev = event_find(name);
		if (!ev) {
			snprintf(err, err_sz, "-e: unknown event '%s'; -e list shows the events", name);
			return -EINVAL;
		}
		for (size_t i = 0; i < set->cnt; i++)
			if (set->ev[i] == ev) {
				snprintf(err, err_sz, "-e: event '%s' given twice", name);
				return -EINVAL;
			}
		if (set->cnt == DLPROF_MAX_EVENTS) {
			snprintf(err, err_sz, "-e: at most %d events at once", DLPROF_MAX_EVENTS);
			return -EINVAL;
		}
		e = event_probe(ev);
		if (e) {
			snprintf(err, err_sz, "-e: event '%s' is not supported on this machine (%s); -e list shows what is",
				 name, ev->hardware && no_pmu_reason(e) ? "no hardware PMU" : strerror(-e));
			return -EINVAL;
		}
		set->ev[set->cnt++] = ev;
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

int event_set_default(struct event_set *set, bool *no_pmu)
{
	static const char *const hw[] = { "cycles", "instructions" };
	static const char *const sw[] = { "page-faults", "context-switches" };
	const char *const *names = hw;

	memset(set, 0, sizeof(*set));
	*no_pmu = event_probe(event_find("cycles")) != 0;
	if (*no_pmu)
		names = sw;
	for (size_t i = 0; i < 2; i++) {
		const struct event_def *ev = event_find(names[i]);

		if (event_probe(ev))
			continue;
		set->ev[set->cnt++] = ev;
	}
	return 0;
}

void event_list_print(FILE *out)
{
	fprintf(out, "%-22s %-9s %-14s %s\n", "EVENT", "KIND", "THIS MACHINE", "MEANING");
	for (size_t i = 0; i < NR_EVENTS; i++) {
		int e = event_probe(&events[i]);

		fprintf(out, "%-22s %-9s %-14s %s\n", events[i].name,
			events[i].hardware ? "hardware" : events[i].task ? "task" : "software",
			!e ? "supported" : events[i].hardware && no_pmu_reason(e) ? "no PMU" : "unsupported",
			events[i].help);
	}
	fprintf(out, "%-22s %-9s %-14s %s\n", "(on-CPU time)", "clock", "always", "time on a CPU during the call");
}

void event_fds_close(int *fds, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
		fds[i] = -1;
	}
}

int event_set_open(const struct event_set *set, int nr_cpus, int *fds)
{
	size_t total = (size_t)nr_cpus * DLPROF_MAX_EVENTS;

	for (size_t i = 0; i < total; i++)
		fds[i] = -1;
	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		for (size_t k = 0; k < set->cnt; k++) {
			int fd;

			if (set->ev[k]->task)
				continue;
			fd = perf_open(set->ev[k], cpu);

			/* A possible CPU that is offline has nothing to count. */
			if (fd == -ENODEV)
				continue;
			if (fd < 0) {
				event_fds_close(fds, total);
				return fd;
			}
			fds[(size_t)cpu * DLPROF_MAX_EVENTS + k] = fd;
		}
	}
	return 0;
}
