/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copies of the profiled libraries that appear while a system-wide profile
 * runs: bpf/discover.bpf.c reports each file a process maps for the first
 * time (or, where the kernel lets no program hook mappings, the kernel's
 * perf mmap records say it), and the exit of processes that map a copy;
 * this feeds lib_copies with them. Woken by the kernel, never a loop over
 * /proc.
 */
#ifndef DLPROF_COPY_DISCOVERY_H
#define DLPROF_COPY_DISCOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "probe/attach.h"
#include "probe/lib_copies.h"
#include "probe/probe_table.h"

struct copy_discovery;

/*
 * Load and attach the hooks, then look for the copies running processes
 * reach already (lib_copies__scan): in that order, so a copy mapped
 * meanwhile is seen by one or the other. The hook on mappings is the
 * first this kernel has (copy_discovery.c); with none, one warning says
 * why and only the copies found at the start are probed. cgroups (absolute v2 directories,
 * borrowed): only their processes' copies; none: every process's.
 * start_unlinked: the copies' functions wait for lib_copies__relink
 * (lib_copies.h). NULL with errno set.
 */
struct copy_discovery *copy_discovery__start(const struct probe_table *t, const struct str_list *specs,
					     enum attach_mode mode, const struct attach_progs *progs,
					     char *const *cgroups, size_t nr_cgroups, bool start_unlinked);
/* Readable when the kernel reported something: then copy_discovery__poll(). */
int copy_discovery__fd(const struct copy_discovery *d);
/* Handle what the kernel reported. 0 or -errno. */
int copy_discovery__poll(struct copy_discovery *d);
/* Events the kernel could not report (its buffer full): copies that may have gone unseen. */
uint64_t copy_discovery__lost(const struct copy_discovery *d);
/*
 * Processes (address spaces) that mapped each library since the start, its
 * copies included, per_lib[nr_libs]: each paid for the library's breakpoints
 * at its mmap. Libraries past DISCOVER_MAX_MAPPED_LIBS read 0.
 */
void copy_discovery__mappings(const struct copy_discovery *d, uint64_t *per_lib, size_t nr_libs);
/* Libraries named by path that were replaced and could not be followed (path_follow.h). */
size_t copy_discovery__follow_failures(const struct copy_discovery *d);
struct lib_copies *copy_discovery__copies(struct copy_discovery *d);
/*
 * Stop reporting and detach every copy (the primaries stay the session's),
 * waiting at most timeout_ms. 0, or 1 when a detach is still under way.
 * NULL-safe.
 */
int copy_discovery__stop(struct copy_discovery *d, int timeout_ms);
void copy_discovery__free(struct copy_discovery *d);

#endif /* DLPROF_COPY_DISCOVERY_H */
