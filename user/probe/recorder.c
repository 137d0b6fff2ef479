// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "attribution_maps.h"
#include "probe/caller_names.h"
#include "probe/kernel_stats.h"
#include "probe/proc_info.h"
#include "probe/recorder.h"
#include "trace/trace_writer.h"
#include "util/clock.h"

/* The design promise: a SIGKILL loses at most the last flush interval. */
#define FLUSH_INTERVAL_NS ((uint64_t)(TRACE_FLUSH_INTERVAL_S * 1e9))

struct recorder {
	struct kernel_maps maps;
	struct ring_buffer *rb;
	struct trace_writer *writer;
	struct dlprof_diag *diag;	/* per CPU */
	int nr_cpus;
	uint64_t last_flush_ns;
	uint64_t records;
	uint64_t bad_records;		/* wrong size or type: a bug, counted rather than hidden */
	int write_err;			/* first write error */
	struct caller_names *callers;	/* --by caller: the files' symbols, read once */
};

/*
 * A return address seen for the first time (--by caller): named into the
 * metadata while the process likely still runs, from where the BPF side
 * found it mapped. A name that cannot be made leaves the address unnamed:
 * report shows it as unknown.
 */
static void note_caller(struct recorder *r, __u32 pid, __u64 addr)
{
	struct trace_meta *m = trace_writer__meta(r->writer);
	char *module = NULL, *symbol = NULL;

	if (trace_meta__find_caller(m, pid, addr))
		return;
	if (!r->callers && !(r->callers = caller_names__new()))
		return;
	if (!caller_names__name(r->callers, r->maps.caller_meta_fd, pid, addr, &module, &symbol))
		trace_meta__set_caller(m, pid, addr, module, symbol);
	free(module);
	free(symbol);
}

/*
 * A process seen for the first time: its name and cgroup into the
 * metadata, as the BPF side took them at its first probed call (or exec),
 * so a process that exited before this drain is named too. /proc only
 * when the BPF side had no room for it.
 */
static void note_process(struct recorder *r, __u32 pid)
{
	struct trace_meta *m = trace_writer__meta(r->writer);
	struct proc_meta pm;
	uint64_t cgroup_id = 0;
	char comm[64] = "";

	if (trace_meta__find_process(m, pid))
		return;
	if (!bpf_map_lookup_elem(r->maps.proc_meta_fd, &pid, &pm)) {
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(pm.comm), pm.comm);
		cgroup_id = pm.cgroup_id;
	} else {
		proc_info_read((pid_t)pid, comm, sizeof(comm), &cgroup_id);
	}
	trace_meta__set_process(m, pid, comm, cgroup_id);
}

/*
 * The threads' own names, as the BPF side took them at their outermost
 * calls, into the metadata before it is written: a thread that has exited
 * keeps its entry, so short-lived threads are named too.
 */
static int note_threads(struct recorder *r)
{
	struct trace_meta *m = trace_writer__meta(r->writer);
	struct thread_name tn;
	__u32 tid, *prev = NULL;
	char comm[DLPROF_COMM_LEN + 1];
	int err = 0;

	while (!err && !bpf_map_get_next_key(r->maps.thread_names_fd, prev, &tid)) {
		prev = &tid;
		/* Deleted in between: nothing to name (no entry is deleted today). */
		if (bpf_map_lookup_elem(r->maps.thread_names_fd, &tid, &tn))
			continue;
		snprintf(comm, sizeof(comm), "%.*s", (int)sizeof(tn.comm), tn.comm);
		err = trace_meta__set_thread(m, tid, tn.pid, comm);
	}
	return err;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct recorder *r = ctx;
	const struct call_record *rec = data;
	int err;

	if (size < sizeof(*rec) || rec->type != REC_CALL) {
		r->bad_records++;
		return 0;
	}
	note_process(r, rec->pid);
	if (rec->caller)
		note_caller(r, rec->pid, rec->caller);
	err = trace_writer__add(r->writer, rec);
	if (err && !r->write_err)
		r->write_err = err;
	r->records++;
	return 0;
}

static int fill_meta(struct recorder *r, const struct probe_table *t, const struct event_set *events,
		     const uint64_t *probe_pair_ns)
{
	struct trace_meta *m = trace_writer__meta(r->writer);
	int err = 0;

	/* What the probes cost the targets, said by report from the trace too (model/probe_overhead.h). */
	for (int k = 0; probe_pair_ns && k < DLPROF_PROBE_CLASSES; k++)
		m->probe_pair_ns[k] = probe_pair_ns[k];
	for (size_t k = 0; k < events->cnt && !err; k++)
		err = trace_meta__add_event(m, events->ev[k]->name);
	for (size_t i = 0; i < t->nr_funcs && !err; i++) {
		const struct probe_func *f = &t->funcs[i];
		const struct probe_lib *lib = &t->libs[f->lib];
		int id = trace_meta__add_func(m, lib->file->display, lib->build_id, f->name, f->offset);

		/* Records name functions by their index in the probe table. */
		if (id < 0)
			err = id;
		else if ((size_t)id != i)
			err = -EINVAL;
		else
			err = trace_meta__set_func_probes(m, (__u32)id, f->stepped, f->entry_only);
	}
	return err ?: trace_writer__write_meta(r->writer);
}

struct recorder *recorder__new(const struct kernel_maps *maps, const struct probe_table *t,
			       const struct event_set *events, const struct recorder_opts *opts)
{
	struct trace_writer_opts wopts = { .no_compress = opts->no_compress };
	struct recorder *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->maps = *maps;
	r->nr_cpus = libbpf_num_possible_cpus();
	if (r->nr_cpus <= 0) {
		err = -EINVAL;
		goto fail;
	}
	r->diag = calloc((size_t)r->nr_cpus, sizeof(*r->diag));
	if (!r->diag) {
		err = -ENOMEM;
		goto fail;
	}
	wopts.nr_cpus = (__u32)r->nr_cpus;
	r->writer = trace_writer__new(opts->dir, &wopts);
	if (!r->writer) {
		err = -errno;
		goto fail;
	}
	err = fill_meta(r, t, events, opts->probe_pair_ns);
	if (err)
		goto fail;
	r->rb = ring_buffer__new(maps->records_fd, on_record, r, NULL);
	if (!r->rb) {
		err = -errno;
		goto fail;
	}
	r->last_flush_ns = mono_ns();
	return r;
fail:
	/* A trace that could not be started (a full disk) leaves nothing a reader could take for one. */
	trace_writer__discard(r->writer);
	r->writer = NULL;
	recorder__free(r);
	errno = -err;
	return NULL;
}

int recorder__set_attach(struct recorder *r, const char *mode, double ms, uint64_t skipped)
{
	return trace_meta__set_attach(trace_writer__meta(r->writer), mode, ms, skipped);
}

int recorder__fd(const struct recorder *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

static int flush(struct recorder *r, uint64_t now)
{
	int err;

	err = kernel_diag_read(&r->maps, r->diag);
	if (!err) {
		struct dlprof_diag sum;

		kernel_diag_sum(r->diag, r->nr_cpus, &sum);
		trace_writer__meta(r->writer)->threads_unnamed = sum.thread_names_full;
	}
	err = note_threads(r) ?: err;
	err = trace_writer__flush(r->writer, now, err ? NULL : r->diag) ?: err;
	r->last_flush_ns = now;
	if (err && !r->write_err)
		r->write_err = err;
	return err;
}

int recorder__drain(struct recorder *r)
{
	uint64_t now;
	int n;

	n = ring_buffer__consume(r->rb);
	if (n < 0)
		return n;
	now = mono_ns();
	if (now - r->last_flush_ns >= FLUSH_INTERVAL_NS)
		return flush(r, now);
	return 0;
}

int recorder__finish(struct recorder *r)
{
	int n, err;

	n = ring_buffer__consume(r->rb);
	err = flush(r, mono_ns());
	err = trace_writer__close(r->writer) ?: err;
	return n < 0 ? n : err;
}

void recorder__counts(const struct recorder *r, uint64_t *written, uint64_t *lost)
{
	struct trace_writer_stats st;
	struct dlprof_diag sum;

	trace_writer__stats(r->writer, &st);
	kernel_diag_sum(r->diag, r->nr_cpus, &sum);
	*written = st.records_written;
	*lost = sum.ringbuf_drops + st.records_lost + r->bad_records;
}

void recorder__free(struct recorder *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	trace_writer__free(r->writer);
	free(r->diag);
	caller_names__free(r->callers);
	free(r);
}
