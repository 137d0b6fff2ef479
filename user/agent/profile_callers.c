// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/profile_callers.h"
#include "probe/kernel_groups.h"
#include "probe/session.h"
#include "util/array.h"

void callers__init(struct profile_callers *c)
{
	*c = (struct profile_callers){ .self = getpid() };
}

void callers__destroy(struct profile_callers *c)
{
	free(c->procs);
	free(c->groups);
	free(c->listed);
	*c = (struct profile_callers){};
}

/* A process's CPU time (all its threads), in seconds; < 0 once it is gone. */
static double proc_cpu_s(pid_t pid)
{
	clockid_t id;
	struct timespec ts;

	if (clock_getcpuclockid(pid, &id) || clock_gettime(id, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The container a process is in, by its cgroup v2 path; "" for the host. */
static void proc_group(pid_t pid, char *id, size_t sz)
{
	char path[64], line[4096];
	size_t end;
	FILE *f;

	id[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (!cgroup_path_container(line + 3, id, sz, &end))
			id[0] = '\0';
		break;
	}
	fclose(f);
}

static struct caller_group *group_of(struct profile_callers *c, const char *id)
{
	struct caller_group *g;

	for (size_t i = 0; i < c->nr_groups; i++)
		if (!strcmp(c->groups[i].id, id))
			return &c->groups[i];
	if (ARRAY_RESERVE(c->groups, c->cap_groups, c->nr_groups + 1))
		return NULL;
	g = &c->groups[c->nr_groups++];
	*g = (struct caller_group){};
	snprintf(g->id, sizeof(g->id), "%s", id);
	return g;
}

static const struct caller_group *find_group(const struct profile_callers *c, const char *id)
{
	for (size_t i = 0; i < c->nr_groups; i++)
		if (!strcmp(c->groups[i].id, id))
			return &c->groups[i];
	return NULL;
}

static struct caller_proc *proc_of(struct profile_callers *c, pid_t pid)
{
	struct caller_proc *p;

	for (size_t i = 0; i < c->nr_procs; i++)
		if (c->procs[i].pid == pid)
			return &c->procs[i];
	if (ARRAY_RESERVE(c->procs, c->cap_procs, c->nr_procs + 1))
		return NULL;
	p = &c->procs[c->nr_procs++];
	*p = (struct caller_proc){ .pid = pid, .cpu_open = -1, .cpu_free = -1 };
	proc_group(pid, p->group, sizeof(p->group));
	return p;
}

/* The kernel's list of callers into c->listed; how many, or a negative errno. */
static long list_callers(struct profile_callers *c, const struct session *s)
{
	long n = session__callers(s, c->listed, c->cap_listed);

	if (n > (long)c->cap_listed) {
		pid_t *l = realloc(c->listed, (size_t)n * 2 * sizeof(*l));

		if (!l)
			return -ENOMEM;
		c->listed = l;
		c->cap_listed = (size_t)n * 2;
		n = session__callers(s, c->listed, c->cap_listed);
	}
	return n > (long)c->cap_listed ? (long)c->cap_listed : n;
}

/* A caller that was read before and is not now: its group's readings miss its part. */
static void drop_unlisted(struct profile_callers *c, const struct session *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < c->nr_procs; i++) {
		struct caller_proc *p = &c->procs[i];
		struct caller_group *g;

		if (p->listed) {
			c->procs[kept++] = *p;
			continue;
		}
		session__forget_caller(s, p->pid);
		g = group_of(c, p->group);
		if (g && (p->cpu_free >= 0 || p->cpu_open >= 0))
			g->partial = true;
	}
	c->nr_procs = kept;
}

enum clock_moment {
	GAP_END,		/* a window opens: the gap's CPU since its start */
	WIN_START,		/* its attach returned */
	WIN_END,		/* its links were freed: the window's CPU since its start */
	GAP_START,		/* its links have closed */
};

/*
 * Reads every listed caller's clock at one of those moments. The attach
 * and the close are neither window nor gap: while the kernel writes or
 * removes the breakpoints a caller may trap without a call counted, and
 * its CPU then says nothing of its calls.
 */
static int read_clocks(struct profile_callers *c, const struct session *s, enum clock_moment at)
{
	long n = list_callers(c, s);

	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < c->nr_procs; i++)
		c->procs[i].listed = false;
	for (long i = 0; i < n; i++) {
		struct caller_proc *p;
		struct caller_group *g;
		double cpu;

		if (c->listed[i] == c->self)
			continue;
		p = proc_of(c, c->listed[i]);
		g = p ? group_of(c, p->group) : NULL;
		if (!g)
			return -ENOMEM;
		cpu = proc_cpu_s(p->pid);
		if (cpu < 0)
			continue;	/* gone: dropped below */
		p->listed = true;
		switch (at) {
		case GAP_END:
			if (p->cpu_free >= 0)
				g->gap_cpu_s += cpu - p->cpu_free;
			else
				g->partial = true;
			p->cpu_open = -1;
			break;
		case WIN_START:
			/* New since the last gap began: none of its gap is known. */
			if (p->cpu_free < 0)
				g->partial = true;
			p->cpu_open = cpu;
			break;
		case WIN_END:
			if (p->cpu_open >= 0) {
				g->win_cpu_s += cpu - p->cpu_open;
				g->procs++;
			} else {
				g->partial = true;
			}
			p->cpu_free = -1;
			break;
		case GAP_START:
			p->cpu_free = cpu;
			break;
		}
	}
	drop_unlisted(c, s);
	return 0;
}

int callers__open(struct profile_callers *c, const struct session *s, double now)
{
	for (size_t i = 0; i < c->nr_groups; i++) {
		struct caller_group *g = &c->groups[i];

		g->gap_cpu_s = g->win_cpu_s = g->calls = 0;
		g->procs = 0;
		g->partial = false;
	}
	c->gap_end_t = now;
	return read_clocks(c, s, GAP_END);
}

int callers__attached(struct profile_callers *c, const struct session *s, double now)
{
	c->open_t = now;
	return read_clocks(c, s, WIN_START);
}

int callers__freed(struct profile_callers *c, const struct session *s, double now)
{
	c->free_t = now;
	return read_clocks(c, s, WIN_END);
}

int callers__closed(struct profile_callers *c, const struct session *s, double now)
{
	c->closed_t = now;
	return read_clocks(c, s, GAP_START);
}

void callers__add_calls(struct profile_callers *c, const char *group, double calls)
{
	struct caller_group *g = group_of(c, group ? group : "");

	if (g)
		g->calls += calls;
}

void callers__close(struct profile_callers *c, double pair_ns, double in_span)
{
	for (size_t i = 0; c->last_closed_t > 0 && i < c->nr_groups; i++) {
		struct caller_group *g = &c->groups[i];
		struct pace_obs o = {
			.gap_s = c->gap_end_t - c->last_closed_t,
			.gap_cpu_s = g->gap_cpu_s,
			.win_s = c->free_t - c->open_t,
			.win_cpu_s = g->win_cpu_s,
			.probe_cpu_s = g->calls * in_span * pair_ns * 1e-9,
		};

		if (!g->partial && g->procs && g->calls > 0)
			pace_add(&g->sums, &o);
	}
	c->last_closed_t = c->closed_t;
}

double callers__factor(const struct profile_callers *c, const char *group)
{
	const struct caller_group *g = find_group(c, group ? group : "");

	return g ? pace_factor(&g->sums) : 0;
}

bool callers__top_shares(const struct profile_callers *c, double *out, double *in_net)
{
	const struct caller_group *top = NULL;

	for (size_t i = 0; i < c->nr_groups; i++)
		if (!top || c->groups[i].calls > top->calls)
			top = &c->groups[i];
	return top && pace_shares(&top->sums, out, in_net);
}
