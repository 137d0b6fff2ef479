/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A trace's metadata: what a reader needs beside the records (clock,
 * events, functions, processes, losses). Kept as meta.json in a trace
 * directory, rewritten whole and renamed into place at each flush; the same
 * JSON sits at the end of a merged .dlt file. Schema: docs/trace-format.md.
 */
#ifndef DLPROF_TRACE_META_H
#define DLPROF_TRACE_META_H

#include <stdbool.h>
#include <stddef.h>

#include "trace_format.h"
#include "model/func_summary.h"

#define TRACE_META_FILE "meta.json"

struct trace_func {
	char *lib;			/* absolute path of the library file */
	char *build_id;			/* hex; "" when the file has none */
	char *symbol;
	__u64 offset;			/* file offset of the probe */
	/* Its probes' class and whether they are entry-only (m->probe_classes: recorded). */
	bool stepped;
	enum entry_only_why entry_only;
};

struct trace_proc {
	__u32 pid;
	__u64 cgroup_id;		/* cgroup v2 id; 0: unknown */
	char *comm;
};

/* --by caller: a return address in a process, named (docs/callers.md). */
struct trace_caller {
	__u32 pid;
	__u64 addr;
	char *module;			/* the file's base name; "?": unknown */
	char *symbol;			/* the calling function, or "+0x<offset>" into module */
};

/* A thread's own name (pthread_setname_np, PR_SET_NAME) as it made its calls. */
struct trace_thread {
	__u32 tid;
	__u32 pid;
	char *comm;
};

/*
 * The recorder writes its blocks and the metadata at least this often: a
 * recording cut off (SIGKILL) loses at most this long of calls.
 */
#define TRACE_FLUSH_INTERVAL_S 1.0

struct trace_cpu_counts {
	__u64 ringbuf_drops;		/* records the kernel lost to a full ringbuf */
	__u64 write_lost;		/* records lost because their block could not be written */
	/* What the shard held at the last metadata write: a reader finding less reports the gap. */
	__u64 blocks;
	__u64 records;
};

struct trace_meta_merge {
	__u64 records;			/* records in the merged file */
	__u64 damaged_blocks;		/* damage found in the inputs (see docs/trace-format.md) */
	__u64 skipped_bytes;
	__u64 skipped_records;		/* lost records known from sound block headers */
};

struct trace_meta {
	__u32 version;			/* TRACE_FORMAT_VERSION */
	__u64 recording_id;		/* as in every shard header of the recording */
	__u64 mono_start_ns;		/* CLOCK_MONOTONIC at start */
	__s64 realtime_offset_ns;	/* CLOCK_REALTIME - CLOCK_MONOTONIC at start */
	__u64 last_flush_ns;		/* CLOCK_MONOTONIC of the last flush; 0: none yet */
	bool ended_cleanly;
	/*
	 * The writer closed the trace: whatever it could not write is counted
	 * (write_lost), so a trace that did not end cleanly is complete but for
	 * those counts. false with ended_cleanly false: cut off (killed), the
	 * calls after last_flush_ns never written.
	 */
	bool closed;

	/* How the shards were written (informational; each file says it too). */
	enum trace_compression compression;
	int zlib_level;
	__u32 block_records;
	__u64 reorder_window_ns;

	char *attach_mode;		/* NULL: not known */
	double attach_ms;
	__u64 functions_skipped;

	char *events[DLPROF_MAX_EVENTS];	/* counter k of a record is events[k] */
	__u32 nr_events;

	/*
	 * The calibrated cost of a probe pair per class, 0: not recorded; and
	 * whether the functions say their probes' class (traces written before
	 * either do not): what the probes cost the targets is said from them.
	 */
	__u64 probe_pair_ns[DLPROF_PROBE_CLASSES];
	bool probe_classes;

	struct trace_func *funcs;	/* indexed by call_record.func_id */
	__u32 nr_funcs;
	__u32 cap_funcs;

	struct trace_proc *procs;	/* sorted by pid */
	size_t nr_procs;
	size_t cap_procs;

	struct trace_thread *threads;	/* sorted by tid; none in traces written before threads were named */
	struct trace_caller *callers;	/* sorted by (pid, addr); only in traces recorded --by caller */
	size_t nr_callers;
	size_t cap_callers;
	size_t nr_threads;
	size_t cap_threads;
	__u64 threads_unnamed;		/* thread names the kernel's map had no room for */

	struct trace_cpu_counts *cpus;	/* one per shard */
	__u32 nr_cpus;

	__u64 orphan_returns;
	__u64 untimed_calls;

	bool merged;			/* from a .dlt: merge below is valid */
	struct trace_meta_merge merge;
};

struct trace_meta *trace_meta__new(void);
void trace_meta__free(struct trace_meta *m);

/* Appends the name of the next counter. 0, -E2BIG past DLPROF_MAX_EVENTS, -ENOMEM. */
int trace_meta__add_event(struct trace_meta *m, const char *name);
/* Appends a function; returns its id (the next index), or -errno. build_id may be NULL. */
int trace_meta__add_func(struct trace_meta *m, const char *lib, const char *build_id,
			 const char *symbol, __u64 offset);
/* Function id's probes: single-stepped or emulated, entry-only and why. 0 or -EINVAL (no such id). */
int trace_meta__set_func_probes(struct trace_meta *m, __u32 id, bool stepped, enum entry_only_why entry_only);
/* Adds pid, or updates its comm and cgroup (after an exec). 0 or -ENOMEM. */
int trace_meta__set_process(struct trace_meta *m, __u32 pid, const char *comm, __u64 cgroup_id);
const struct trace_proc *trace_meta__find_process(const struct trace_meta *m, __u32 pid);
/* Adds tid, or updates its pid and comm (a rename, a tid used again). 0 or -ENOMEM. */
int trace_meta__set_thread(struct trace_meta *m, __u32 tid, __u32 pid, const char *comm);
/* The thread's name, or NULL when the metadata has none for tid in pid. */
const struct trace_thread *trace_meta__find_thread(const struct trace_meta *m, __u32 pid, __u32 tid);
/* Adds (pid, addr) named module and symbol; a known one keeps its name. 0 or -ENOMEM. */
int trace_meta__set_caller(struct trace_meta *m, __u32 pid, __u64 addr, const char *module, const char *symbol);
/* The caller at addr in pid, or NULL. */
const struct trace_caller *trace_meta__find_caller(const struct trace_meta *m, __u32 pid, __u64 addr);
/* Sizes the per-CPU counts (zeroed). 0 or -errno. */
int trace_meta__set_nr_cpus(struct trace_meta *m, __u32 nr_cpus);
int trace_meta__set_attach(struct trace_meta *m, const char *mode, double ms, __u64 skipped);
/* A deep copy, for the file a merge writes. NULL on ENOMEM. */
struct trace_meta *trace_meta__dup(const struct trace_meta *m);

/* Totals over CPUs. */
__u64 trace_meta__drops(const struct trace_meta *m);
__u64 trace_meta__write_lost(const struct trace_meta *m);

/* The JSON text (malloc'd, ends with a newline), or NULL on ENOMEM. */
char *trace_meta__to_json(const struct trace_meta *m, size_t *len);
/*
 * Parses and validates JSON text. Returns 0, -ENOMEM, or -EINVAL with
 * the problem in err (one line, no newline).
 */
int trace_meta__parse(struct trace_meta **out, const char *text, size_t len,
		      char *err, size_t err_sz);
/* meta.json in dirfd, through a temporary file renamed over it. 0 or -errno. */
int trace_meta__write(const struct trace_meta *m, int dirfd);
/*
 * After the last write: the spare file each write reuses (so that a full
 * disk cannot stop the metadata from being updated) is not needed any more.
 */
void trace_meta__drop_spare(int dirfd);
/* Reads meta.json of dirfd: -ENOENT when absent, -EINVAL (err says why) when corrupt. */
int trace_meta__load(struct trace_meta **out, int dirfd, char *err, size_t err_sz);

#endif /* DLPROF_TRACE_META_H */
