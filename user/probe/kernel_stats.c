// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/kernel_stats.h"
#include "stats_settle.h"

_Static_assert(sizeof(struct dlprof_diag) % sizeof(__u64) == 0, "dlprof_diag holds only __u64 counters");

int kernel_diag_read(const struct kernel_maps *km, struct dlprof_diag *per_cpu)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(km->diag_fd, &zero, per_cpu))
		return -errno;
	return 0;
}

void kernel_diag_sum(const struct dlprof_diag *per_cpu, int ncpu, struct dlprof_diag *sum)
{
	/* struct dlprof_diag is all __u64 counters. */
	const __u64 *in = (const __u64 *)per_cpu;
	__u64 *out = (__u64 *)sum;
	size_t n = sizeof(*sum) / sizeof(__u64);

	memset(sum, 0, sizeof(*sum));
	for (int c = 0; c < ncpu; c++)
		for (size_t i = 0; i < n; i++)
			out[i] += in[(size_t)c * n + i];
}

void kernel_probe_runtime(const struct kernel_maps *km, uint64_t *run_ns, uint64_t *runs)
{
	*run_ns = *runs = 0;
	for (size_t i = 0; i < sizeof(km->prog_fds) / sizeof(km->prog_fds[0]); i++) {
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = km->prog_fds[i];

		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		*run_ns += info.run_time_ns;
		*runs += info.run_cnt;
	}
}

int kernel_stats_read(const struct kernel_maps *km, const struct probe_table *t,
		      struct func_profile *rows, struct dlprof_diag *diag)
{
	int ncpu = libbpf_num_possible_cpus();
	int stats_fd = km->stats_fd;
	int calls_fd = km->calls_fd;
	struct dlprof_diag *diag_cpu = NULL;
	struct func_stats *stats = NULL;
	__u64 *calls_cpu = NULL;
	int err = 0;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	stats = malloc(sizeof(*stats));
	calls_cpu = calloc((size_t)ncpu, sizeof(*calls_cpu));
	diag_cpu = calloc((size_t)ncpu, sizeof(*diag_cpu));
	if (!stats || !calls_cpu || !diag_cpu) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (__u32 id = 0; id < t->nr_funcs; id++) {
		__u64 calls = 0;

		/* Stats before calls: every return read here had its entry counted before. */
		if (bpf_map_lookup_elem(stats_fd, &id, stats) ||
		    bpf_map_lookup_elem(calls_fd, &id, calls_cpu)) {
			err = -errno;
			goto cleanup;
		}
		for (int c = 0; c < ncpu; c++)
			calls += calls_cpu[c];
		func_stats_settle(stats);
		rows[id].lib = t->libs[t->funcs[id].lib].file->display;
		rows[id].func = t->funcs[id].demangled ?: t->funcs[id].name;
		rows[id].mangled = t->funcs[id].demangled ? t->funcs[id].name : NULL;
		rows[id].entry_only = t->funcs[id].entry_only;
		rows[id].stepped = t->funcs[id].stepped;
		func_summary_build(&rows[id].s, stats, calls);
	}
	err = kernel_diag_read(km, diag_cpu);
	if (err)
		goto cleanup;
	kernel_diag_sum(diag_cpu, ncpu, diag);
cleanup:
	free(stats);
	free(calls_cpu);
	free(diag_cpu);
	return err;
}

int kernel_hists_read(const struct kernel_maps *km, size_t nr_funcs, __u64 *hists)
{
	struct func_stats *stats = malloc(sizeof(*stats));
	int err = 0;

	if (!stats)
		return -ENOMEM;
	for (__u32 id = 0; id < nr_funcs; id++) {
		if (bpf_map_lookup_elem(km->stats_fd, &id, stats)) {
			err = -errno;
			break;
		}
		memcpy(hists + (size_t)id * HIST_BUCKETS, stats->hist, sizeof(stats->hist));
	}
	free(stats);
	return err;
}

/* All functions' per-CPU calls in one syscall (BPF_MAP_LOOKUP_BATCH, kernel 5.6): 0, or -errno to go one by one. */
static int calls_read_batch(const struct kernel_maps *km, size_t nr_funcs, int ncpu, uint64_t *calls)
{
	__u32 n = (__u32)nr_funcs, count = n, out_batch;
	__u32 *keys = calloc(n ?: 1, sizeof(*keys));
	__u64 *values = calloc((size_t)(n ?: 1) * (size_t)ncpu, sizeof(*values));
	int ret = keys && values ? 0 : -ENOMEM;

	if (!ret && n && bpf_map_lookup_batch(km->calls_fd, NULL, &out_batch, keys, values, &count, NULL) &&
	    errno != ENOENT)
		ret = -errno;
	if (!ret && count != n)
		ret = -EAGAIN;
	for (__u32 i = 0; i < n && !ret; i++) {
		calls[keys[i]] = 0;
		for (int c = 0; c < ncpu; c++)
			calls[keys[i]] += values[(size_t)i * (size_t)ncpu + (size_t)c];
	}
	free(keys);
	free(values);
	return ret;
}

int kernel_calls_read(const struct kernel_maps *km, size_t nr_funcs, uint64_t *calls)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *per_cpu;
	int ret = 0;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	if (!calls_read_batch(km, nr_funcs, ncpu, calls))
		return 0;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	if (!per_cpu)
		return -ENOMEM;
	for (__u32 id = 0; id < nr_funcs && !ret; id++) {
		if (bpf_map_lookup_elem(km->calls_fd, &id, per_cpu)) {
			ret = -errno;
			break;
		}
		calls[id] = 0;
		for (int c = 0; c < ncpu; c++)
			calls[id] += per_cpu[c];
	}
	free(per_cpu);
	return ret;
}

int kernel_func_read(const struct kernel_maps *km, const struct probe_table *t, size_t func, struct func_profile *f,
		     __u64 *hist)
{
	int ncpu = libbpf_num_possible_cpus();
	struct func_stats *stats = malloc(sizeof(*stats));
	__u64 *per_cpu = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*per_cpu)) : NULL;
	__u32 id = (__u32)func;
	uint64_t calls = 0;
	int ret = 0;

	if (!stats || !per_cpu)
		ret = -ENOMEM;
	else if (func >= t->nr_funcs)
		ret = -EINVAL;
	/* Stats before calls: every return read here had its entry counted before. */
	else if (bpf_map_lookup_elem(km->stats_fd, &id, stats) || bpf_map_lookup_elem(km->calls_fd, &id, per_cpu))
		ret = -errno;
	if (!ret) {
		for (int c = 0; c < ncpu; c++)
			calls += per_cpu[c];
		f->lib = t->libs[t->funcs[id].lib].file->display;
		f->func = t->funcs[id].demangled ?: t->funcs[id].name;
		f->mangled = t->funcs[id].demangled ? t->funcs[id].name : NULL;
		f->entry_only = t->funcs[id].entry_only;
		f->stepped = t->funcs[id].stepped;
		func_summary_build(&f->s, stats, calls);
		if (hist)
			memcpy(hist, stats->hist, sizeof(stats->hist));
	}
	free(stats);
	free(per_cpu);
	return ret;
}

uint64_t kernel_all_calls(const struct kernel_maps *km, __u64 *per_cpu)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *buf = per_cpu ?: (ncpu > 0 ? calloc((size_t)ncpu, sizeof(*buf)) : NULL);
	__u32 zero = 0;
	uint64_t sum = 0;

	if (buf && !bpf_map_lookup_elem(km->all_calls_fd, &zero, buf))
		for (int c = 0; c < ncpu; c++)
			sum += buf[c];
	if (buf != per_cpu)
		free(buf);
	return sum;
}
