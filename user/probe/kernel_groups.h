/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the in-kernel aggregates per (function, group) of --by: one row
 * per function and process or cgroup, or per function and container (the
 * container's cgroups merged, the host's processes in one row), each
 * named from what the BPF side captured at first sight.
 */
#ifndef DLPROF_KERNEL_GROUPS_H
#define DLPROF_KERNEL_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attribution_maps.h"
#include "model/attribution.h"
#include "model/func_summary.h"
#include "probe/container_names.h"
#include "probe/kernel_stats.h"
#include "probe/probe_table.h"

/* The rows of the last read and the names they point into. */
struct kernel_groups;

/* roots: where container runtimes keep their names (NULL: their defaults); borrowed. */
struct kernel_groups *kernel_groups__new(enum attr_by by, const struct container_roots *roots);
/*
 * Read the group aggregates into rows (owned by kg, valid until the next
 * read or kernel_groups__free). 0 or -errno.
 */
int kernel_groups__read(struct kernel_groups *kg, const struct kernel_maps *km, const struct probe_table *t,
			const struct func_profile **rows, size_t *n);
/*
 * What naming a cgroup does between lookups of a path the BPF side has
 * not written yet (it writes it just after the group's entry): wait(ctx)
 * instead of a short sleep. For tests, which write the path there.
 */
void kernel_groups__meta_wait(struct kernel_groups *kg, void (*wait)(void *ctx), void *ctx);
/*
 * Free the kernel's entries of containers whose cgroups were removed: their
 * aggregates, their cgroups' names. The maps stay bounded while containers
 * come and go (host cgroups are kept: the host's row sums them). The
 * aggregate entries freed, or -errno.
 */
int kernel_groups__forget_removed(struct kernel_groups *kg, const struct kernel_maps *km);
/*
 * By caller: the processes of the table that exited since they were first
 * seen (by pid and start time, pid_lives.h), their pid maybe held by a
 * new process now: *pids (sorted, the caller frees it), *n of them. Then
 * kernel_groups__retire moves their aggregates out of the kernel's table
 * into rows kept here, named as they were, and frees their mappings
 * (caller_meta), so that a process that takes a freed pid is named from
 * its own mappings, its calls apart. Apart, so that what still reads the
 * mappings (a recording's drain) runs in between. 0 or -errno.
 */
int kernel_groups__exited(struct kernel_groups *kg, const struct kernel_maps *km, uint32_t **pids, size_t *n);
int kernel_groups__retire(struct kernel_groups *kg, const struct kernel_maps *km, const uint32_t *pids, size_t n);
/* The merged stats of the last read's rows, row for row (the histograms a row's summary leaves out). */
const struct func_stats *kernel_groups__stats(const struct kernel_groups *kg);
void kernel_groups__free(struct kernel_groups *kg);
/*
 * By caller: rows per (function, caller, container) instead of per
 * (function, caller), each caller's process placed in its container by
 * its cgroup when the caller is first seen (the agent's caller label).
 */
void kernel_groups__caller_containers(struct kernel_groups *kg);

/*
 * A cgroup path as the BPF side took it (names leaf first, levels of
 * them; truncated: the top is missing) into "/a/b/c" in buf. Pure, for tests.
 */
void cgroup_meta_path(const struct cgroup_meta *m, char *buf, size_t sz);

/*
 * The container id in a cgroup path (its first component that names one),
 * copied into id (65 bytes); *end: the path's length up to that component.
 * false when the path is in no container.
 */
bool cgroup_path_container(const char *path, char *id, size_t id_sz, size_t *end);

#endif /* DLPROF_KERNEL_GROUPS_H */
