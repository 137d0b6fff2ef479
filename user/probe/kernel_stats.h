/* SPDX-License-Identifier: GPL-2.0-only */
/* Reading the in-kernel aggregates of a loaded profile. */
#ifndef DLPROF_KERNEL_STATS_H
#define DLPROF_KERNEL_STATS_H

#include "dlprof.h"
#include "model/func_summary.h"
#include "probe/probe_table.h"

/* The loaded object's maps and probe programs, by fd: what reading them needs. */
struct kernel_maps {
	int stats_fd;
	int calls_fd;
	int diag_fd;
	int records_fd;		/* -1 when the object emits no records */
	int groups_fd;		/* group_stats: per (function, group), --by */
	int proc_meta_fd;	/* proc_meta: each process's name and cgroup at first sight */
	int thread_names_fd;	/* thread_names: each thread's own name (record mode) */
	int cgroup_meta_fd;	/* cgroup_meta: each grouped cgroup's path */
	int caller_meta_fd;	/* caller_meta: where each return address was mapped (--by caller) */
	int all_calls_fd;	/* all_calls: every entry, of every function (a budget's front end) */
	int prog_fds[3];	/* entry, return, session; -1: not loaded */
};

/* The diagnostics of each possible CPU into per_cpu (libbpf_num_possible_cpus() entries). */
int kernel_diag_read(const struct kernel_maps *km, struct dlprof_diag *per_cpu);
/* sum = the diagnostics of all CPUs added up. */
void kernel_diag_sum(const struct dlprof_diag *per_cpu, int ncpu, struct dlprof_diag *sum);

/*
 * Time the probe programs spent running and how often they ran, summed
 * (the kernel counts only while sysctl kernel.bpf_stats_enabled is 1).
 */
void kernel_probe_runtime(const struct kernel_maps *km, uint64_t *run_ns, uint64_t *runs);

/*
 * Fill rows[i] (i < t->nr_funcs) from the per-CPU maps, summed over CPUs,
 * and *diag with the profiler-wide counters. Returns 0 or -errno.
 */
int kernel_stats_read(const struct kernel_maps *km, const struct probe_table *t,
		      struct func_profile *rows, struct dlprof_diag *diag);

/*
 * The wall-time histogram of each function's timed calls into
 * hists[id * HIST_BUCKETS ...] (id < nr_funcs). Returns 0 or -errno.
 */
int kernel_hists_read(const struct kernel_maps *km, size_t nr_funcs, __u64 *hists);

/* The entries of each function (calls[id], id < nr_funcs), summed over CPUs. 0 or -errno. */
int kernel_calls_read(const struct kernel_maps *km, size_t nr_funcs, uint64_t *calls);
/* One function's aggregates, and its raw histogram (HIST_BUCKETS entries) unless hist is NULL. 0 or -errno. */
int kernel_func_read(const struct kernel_maps *km, const struct probe_table *t, size_t func, struct func_profile *f,
		     __u64 *hist);
/* The entries of every function so far, summed over CPUs, in one lookup; 0 when it cannot be read. */
uint64_t kernel_all_calls(const struct kernel_maps *km, __u64 *per_cpu);

#endif /* DLPROF_KERNEL_STATS_H */
