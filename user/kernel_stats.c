// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel_stats.h"
#include "profile.skel.h"

int kernel_stats_read(struct profile_bpf *skel, const struct probe_table *t,
		      struct report_row *rows, struct dlprof_diag *diag)
{
	int ncpu = libbpf_num_possible_cpus();
	int stats_fd = bpf_map__fd(skel->maps.stats);
	int calls_fd = bpf_map__fd(skel->maps.call_counts);
	int diag_fd = bpf_map__fd(skel->maps.diag);
	struct func_stats *per_cpu = NULL, *sum = NULL;
	struct dlprof_diag *diag_cpu = NULL;
	__u64 *calls_cpu = NULL;
	__u32 zero = 0;
	int err = 0;

	if (ncpu <= 0)
		return ncpu ?: -EINVAL;
	per_cpu = calloc((size_t)ncpu, sizeof(*per_cpu));
	sum = calloc(1, sizeof(*sum));
	calls_cpu = calloc((size_t)ncpu, sizeof(*calls_cpu));
	diag_cpu = calloc((size_t)ncpu, sizeof(*diag_cpu));
	if (!per_cpu || !sum || !calls_cpu || !diag_cpu) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (__u32 id = 0; id < t->nr_funcs; id++) {
		__u64 calls = 0;

		memset(sum, 0, sizeof(*sum));
		/* Stats before calls: every return read here had its entry counted before. */
		if (!bpf_map_lookup_elem(stats_fd, &id, per_cpu))
			for (int c = 0; c < ncpu; c++)
				func_stats_accumulate(sum, &per_cpu[c]);
		else if (errno != ENOENT) {
			err = -errno;
			goto cleanup;
		}
		if (bpf_map_lookup_elem(calls_fd, &id, calls_cpu)) {
			err = -errno;
			goto cleanup;
		}
		for (int c = 0; c < ncpu; c++)
			calls += calls_cpu[c];
		rows[id].lib = t->libs[t->funcs[id].lib].file->display;
		rows[id].func = t->funcs[id].name;
		func_summary_build(&rows[id].s, sum, calls);
	}
	memset(diag, 0, sizeof(*diag));
	if (bpf_map_lookup_elem(diag_fd, &zero, diag_cpu)) {
		err = -errno;
		goto cleanup;
	}
	for (int c = 0; c < ncpu; c++) {
		diag->orphan_returns += diag_cpu[c].orphan_returns;
		diag->stats_alloc_failed += diag_cpu[c].stats_alloc_failed;
		diag->storage_failed += diag_cpu[c].storage_failed;
		diag->ringbuf_drops += diag_cpu[c].ringbuf_drops;
		diag->counter_read_failed += diag_cpu[c].counter_read_failed;
		diag->preempt_retries += diag_cpu[c].preempt_retries;
	}
cleanup:
	free(per_cpu);
	free(sum);
	free(calls_cpu);
	free(diag_cpu);
	return err;
}
