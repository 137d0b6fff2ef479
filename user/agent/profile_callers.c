// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/profile_callers.h"
#include "probe/kernel_groups.h"
#include "probe/session.h"
#include "util/array.h"
#include "util/clock.h"

void callers__init(struct profile_callers *c)
{
	*c = (struct profile_callers){ .self = getpid() };
}

void callers__destroy(struct profile_callers *c)
{
	for (size_t i = 0; i < c->nr_procs; i++)
		caller_clock__stop(&c->procs[i].clock);
	free(c->procs);
	free(c->groups);
	free(c->listed);
	*c = (struct profile_callers){};
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
	*p = (struct caller_proc){ .pid = pid, .cpu_open = -1, .exact_open = -1, .cpu_free = -1 };
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
		caller_clock__stop(&p->clock);
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

/* Opens the window's events of the n listed callers, as many as it has room for. */
static int start_clocks(struct profile_callers *c, long n)
{
	size_t threads_left = CALLER_CLOCK_WINDOW_THREADS;

	c->win_procs = c->win_exact = 0;
	for (long i = 0; i < n; i++) {
		struct caller_proc *p;

		if (c->listed[i] == c->self)
			continue;
		p = proc_of(c, c->listed[i]);
		if (!p)
			return -ENOMEM;
		caller_clock__stop(&p->clock);
		threads_left -= caller_clock__start(&p->clock, p->pid, threads_left);
		c->win_exact += caller_clock__exact(&p->clock);
		c->win_procs++;
	}
	return 0;
}

/*
 * Reads every listed caller's clock at one of those moments; *t: when
 * (the middle of the reads, which open the window's events at its start).
 * The attach and the close are neither window nor gap: while the kernel
 * writes or removes the breakpoints a caller may trap without a call
 * counted, and its CPU then says nothing of its calls.
 */
static int read_clocks(struct profile_callers *c, const struct session *s, enum clock_moment at, double *t)
{
	long n = list_callers(c, s);
	double t0;
	int ret;

	*t = mono_seconds();
	if (n < 0)
		return (int)n;
	/* The window's events first: their opening takes a while, and each counts from its own. */
	if (at == WIN_START) {
		ret = start_clocks(c, n);
		if (ret)
			return ret;
	}
	t0 = mono_seconds();
	for (size_t i = 0; i < c->nr_procs; i++)
		c->procs[i].listed = false;
	for (long i = 0; i < n; i++) {
		struct caller_proc *p;
		struct caller_group *g;
		double cpu, exact;

		if (c->listed[i] == c->self)
			continue;
		p = proc_of(c, c->listed[i]);
		g = p ? group_of(c, p->group) : NULL;
		if (!g)
			return -ENOMEM;
		/*
		 * A window's events are read at its end, and closed once its
		 * cost is measured (their close is kernel time too), or as the
		 * next window opens when one never ended.
		 */
		if (at == GAP_END || at == GAP_START)
			caller_clock__stop(&p->clock);
		cpu = caller_clock__read(&p->clock, p->pid, &exact);
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
			p->exact_open = exact;
			break;
		case WIN_END:
			if (p->cpu_open >= 0) {
				/* Each clock reads short in its own case (caller_clock.h). */
				g->win_cpu_s += fmax(cpu - p->cpu_open,
						     exact >= 0 && p->exact_open >= 0 ? exact - p->exact_open : 0);
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
	*t = (t0 + mono_seconds()) / 2;
	return 0;
}

int callers__open(struct profile_callers *c, const struct session *s)
{
	for (size_t i = 0; i < c->nr_groups; i++) {
		struct caller_group *g = &c->groups[i];

		g->gap_cpu_s = g->win_cpu_s = g->calls = 0;
		g->procs = 0;
		g->partial = false;
	}
	return read_clocks(c, s, GAP_END, &c->gap_end_t);
}

int callers__attached(struct profile_callers *c, const struct session *s)
{
	return read_clocks(c, s, WIN_START, &c->open_t);
}

int callers__freed(struct profile_callers *c, const struct session *s)
{
	return read_clocks(c, s, WIN_END, &c->free_t);
}

int callers__closed(struct profile_callers *c, const struct session *s)
{
	return read_clocks(c, s, GAP_START, &c->closed_t);
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
