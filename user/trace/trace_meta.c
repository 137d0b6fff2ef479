// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "model/probe_class.h"
#include "util/file_io.h"
#include "trace/trace_meta.h"
#include "util/array.h"
#include "util/sorted.h"

#define META_TMP_FILE TRACE_META_FILE ".tmp"

/* The names of enum trace_compression in the JSON. */
static const char *const comp_names[] = {
	[TRACE_COMP_NONE] = "none",
	[TRACE_COMP_ZLIB] = "zlib",
};

struct trace_meta *trace_meta__new(void)
{
	struct trace_meta *m = calloc(1, sizeof(*m));

	if (m)
		m->version = TRACE_FORMAT_VERSION;
	return m;
}

void trace_meta__free(struct trace_meta *m)
{
	if (!m)
		return;
	for (__u32 i = 0; i < m->nr_events; i++)
		free(m->events[i]);
	for (__u32 i = 0; i < m->nr_funcs; i++) {
		free(m->funcs[i].lib);
		free(m->funcs[i].build_id);
		free(m->funcs[i].symbol);
	}
	for (size_t i = 0; i < m->nr_procs; i++)
		free(m->procs[i].comm);
	for (size_t i = 0; i < m->nr_threads; i++)
		free(m->threads[i].comm);
	free(m->threads);
	for (size_t i = 0; i < m->nr_callers; i++) {
		free(m->callers[i].module);
		free(m->callers[i].symbol);
	}
	free(m->callers);
	free(m->funcs);
	free(m->procs);
	free(m->cpus);
	free(m->attach_mode);
	free(m);
}

int trace_meta__add_event(struct trace_meta *m, const char *name)
{
	char *s;

	if (m->nr_events == DLPROF_MAX_EVENTS)
		return -E2BIG;
	s = strdup(name);
	if (!s)
		return -ENOMEM;
	m->events[m->nr_events++] = s;
	return 0;
}

int trace_meta__add_func(struct trace_meta *m, const char *lib, const char *build_id,
			 const char *symbol, __u64 offset)
{
	struct trace_func *f;

	if (m->nr_funcs >= INT32_MAX)
		return -E2BIG;
	if (m->nr_funcs == m->cap_funcs) {
		__u32 cap = m->cap_funcs ? 2 * m->cap_funcs : 64;

		f = realloc(m->funcs, (size_t)cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		m->funcs = f;
		m->cap_funcs = cap;
	}
	f = &m->funcs[m->nr_funcs];
	f->lib = strdup(lib);
	f->build_id = strdup(build_id ? build_id : "");
	f->symbol = strdup(symbol);
	f->offset = offset;
	f->stepped = false;
	f->entry_only = ENTRY_ONLY_NO;
	if (!f->lib || !f->build_id || !f->symbol) {
		free(f->lib);
		free(f->build_id);
		free(f->symbol);
		return -ENOMEM;
	}
	return (int)m->nr_funcs++;
}

int trace_meta__set_func_probes(struct trace_meta *m, __u32 id, bool stepped, enum entry_only_why entry_only)
{
	if (id >= m->nr_funcs)
		return -EINVAL;
	m->funcs[id].stepped = stepped;
	m->funcs[id].entry_only = entry_only;
	m->probe_classes = true;
	return 0;
}

/* Index of pid in procs, or where it would go. */
static size_t proc_slot(const struct trace_meta *m, __u32 pid)
{
	return PARTITION_POINT(m->nr_procs, i, m->procs[i].pid < pid);
}

const struct trace_proc *trace_meta__find_process(const struct trace_meta *m, __u32 pid)
{
	size_t i = proc_slot(m, pid);

	return i < m->nr_procs && m->procs[i].pid == pid ? &m->procs[i] : NULL;
}

int trace_meta__set_process(struct trace_meta *m, __u32 pid, const char *comm, __u64 cgroup_id)
{
	size_t i = proc_slot(m, pid);
	char *c = strdup(comm);

	if (!c)
		return -ENOMEM;
	if (i < m->nr_procs && m->procs[i].pid == pid) {
		free(m->procs[i].comm);
		m->procs[i].comm = c;
		m->procs[i].cgroup_id = cgroup_id;
		return 0;
	}
	if (ARRAY_RESERVE(m->procs, m->cap_procs, m->nr_procs + 1)) {
		free(c);
		return -ENOMEM;
	}
	memmove(&m->procs[i + 1], &m->procs[i], (m->nr_procs - i) * sizeof(*m->procs));
	m->procs[i] = (struct trace_proc){ .pid = pid, .cgroup_id = cgroup_id, .comm = c };
	m->nr_procs++;
	return 0;
}

/* Index of tid in threads, or where it would go. */
static size_t thread_slot(const struct trace_meta *m, __u32 tid)
{
	return PARTITION_POINT(m->nr_threads, i, m->threads[i].tid < tid);
}

const struct trace_thread *trace_meta__find_thread(const struct trace_meta *m, __u32 pid, __u32 tid)
{
	size_t i = thread_slot(m, tid);

	if (i < m->nr_threads && m->threads[i].tid == tid && m->threads[i].pid == pid)
		return &m->threads[i];
	return NULL;
}

int trace_meta__set_thread(struct trace_meta *m, __u32 tid, __u32 pid, const char *comm)
{
	size_t i = thread_slot(m, tid);
	char *c;

	if (i < m->nr_threads && m->threads[i].tid == tid && m->threads[i].pid == pid &&
	    !strcmp(m->threads[i].comm, comm))
		return 0;
	c = strdup(comm);
	if (!c)
		return -ENOMEM;
	if (i < m->nr_threads && m->threads[i].tid == tid) {
		free(m->threads[i].comm);
		m->threads[i].comm = c;
		m->threads[i].pid = pid;
		return 0;
	}
	if (ARRAY_RESERVE(m->threads, m->cap_threads, m->nr_threads + 1)) {
		free(c);
		return -ENOMEM;
	}
	memmove(&m->threads[i + 1], &m->threads[i], (m->nr_threads - i) * sizeof(*m->threads));
	m->threads[i] = (struct trace_thread){ .tid = tid, .pid = pid, .comm = c };
	m->nr_threads++;
	return 0;
}

/* Index of (pid, addr) in callers, or where it would go. */
static size_t caller_slot(const struct trace_meta *m, __u32 pid, __u64 addr)
{
	return PARTITION_POINT(m->nr_callers, i,
			       m->callers[i].pid < pid || (m->callers[i].pid == pid && m->callers[i].addr < addr));
}

const struct trace_caller *trace_meta__find_caller(const struct trace_meta *m, __u32 pid, __u64 addr)
{
	size_t i = caller_slot(m, pid, addr);

	if (i < m->nr_callers && m->callers[i].pid == pid && m->callers[i].addr == addr)
		return &m->callers[i];
	return NULL;
}

int trace_meta__set_caller(struct trace_meta *m, __u32 pid, __u64 addr, const char *module, const char *symbol)
{
	size_t i = caller_slot(m, pid, addr);
	char *mod, *sym;

	if (i < m->nr_callers && m->callers[i].pid == pid && m->callers[i].addr == addr)
		return 0;
	mod = strdup(module);
	sym = strdup(symbol);
	if (!mod || !sym || ARRAY_RESERVE(m->callers, m->cap_callers, m->nr_callers + 1)) {
		free(mod);
		free(sym);
		return -ENOMEM;
	}
	memmove(&m->callers[i + 1], &m->callers[i], (m->nr_callers - i) * sizeof(*m->callers));
	m->callers[i] = (struct trace_caller){ .pid = pid, .addr = addr, .module = mod, .symbol = sym };
	m->nr_callers++;
	return 0;
}

int trace_meta__set_nr_cpus(struct trace_meta *m, __u32 nr_cpus)
{
	struct trace_cpu_counts *c;

	if (!nr_cpus || nr_cpus > TRACE_MAX_CPUS)
		return -EINVAL;
	c = calloc(nr_cpus, sizeof(*c));
	if (!c)
		return -ENOMEM;
	free(m->cpus);
	m->cpus = c;
	m->nr_cpus = nr_cpus;
	return 0;
}

int trace_meta__set_attach(struct trace_meta *m, const char *mode, double ms, __u64 skipped)
{
	char *s = strdup(mode);

	if (!s)
		return -ENOMEM;
	free(m->attach_mode);
	m->attach_mode = s;
	m->attach_ms = ms;
	m->functions_skipped = skipped;
	return 0;
}

struct trace_meta *trace_meta__dup(const struct trace_meta *m)
{
	struct trace_meta *d = trace_meta__new();
	int err = 0;

	if (!d)
		return NULL;
	d->recording_id = m->recording_id;
	d->mono_start_ns = m->mono_start_ns;
	d->realtime_offset_ns = m->realtime_offset_ns;
	d->last_flush_ns = m->last_flush_ns;
	d->ended_cleanly = m->ended_cleanly;
	d->closed = m->closed;
	d->compression = m->compression;
	d->zlib_level = m->zlib_level;
	d->block_records = m->block_records;
	d->reorder_window_ns = m->reorder_window_ns;
	d->orphan_returns = m->orphan_returns;
	d->untimed_calls = m->untimed_calls;
	d->threads_unnamed = m->threads_unnamed;
	d->merged = m->merged;
	d->merge = m->merge;
	memcpy(d->probe_pair_ns, m->probe_pair_ns, sizeof(d->probe_pair_ns));
	if (m->attach_mode)
		err = trace_meta__set_attach(d, m->attach_mode, m->attach_ms, m->functions_skipped);
	for (__u32 i = 0; i < m->nr_events && !err; i++)
		err = trace_meta__add_event(d, m->events[i]);
	for (__u32 i = 0; i < m->nr_funcs && !err; i++) {
		const struct trace_func *f = &m->funcs[i];
		int id = trace_meta__add_func(d, f->lib, f->build_id, f->symbol, f->offset);

		err = id < 0 ? id : 0;
		if (!err && m->probe_classes)
			err = trace_meta__set_func_probes(d, (__u32)id, f->stepped, f->entry_only);
	}
	for (size_t i = 0; i < m->nr_procs && !err; i++)
		err = trace_meta__set_process(d, m->procs[i].pid, m->procs[i].comm,
					      m->procs[i].cgroup_id);
	for (size_t i = 0; i < m->nr_threads && !err; i++)
		err = trace_meta__set_thread(d, m->threads[i].tid, m->threads[i].pid, m->threads[i].comm);
	for (size_t i = 0; i < m->nr_callers && !err; i++)
		err = trace_meta__set_caller(d, m->callers[i].pid, m->callers[i].addr, m->callers[i].module,
					     m->callers[i].symbol);
	if (!err && m->nr_cpus) {
		err = trace_meta__set_nr_cpus(d, m->nr_cpus);
		if (!err)
			memcpy(d->cpus, m->cpus, m->nr_cpus * sizeof(*m->cpus));
	}
	if (err) {
		trace_meta__free(d);
		return NULL;
	}
	return d;
}

__u64 trace_meta__drops(const struct trace_meta *m)
{
	__u64 n = 0;

	for (__u32 i = 0; i < m->nr_cpus; i++)
		n += m->cpus[i].ringbuf_drops;
	return n;
}

__u64 trace_meta__write_lost(const struct trace_meta *m)
{
	__u64 n = 0;

	for (__u32 i = 0; i < m->nr_cpus; i++)
		n += m->cpus[i].write_lost;
	return n;
}

/* ---- to JSON ---- */

/* Adds to o, or records the failure in *err: one check at the end instead of one per key. */
static void put(struct json_object *o, const char *key, struct json_object *v, int *err)
{
	if (!v || json_object_object_add(o, key, v)) {
		json_object_put(v);
		*err = -ENOMEM;
	}
}

static void put_u64(struct json_object *o, const char *key, __u64 v, int *err)
{
	put(o, key, json_object_new_uint64(v), err);
}

static void append(struct json_object *a, struct json_object *v, int *err)
{
	if (!v || json_object_array_add(a, v)) {
		json_object_put(v);
		*err = -ENOMEM;
	}
}

static struct json_object *new_obj(struct json_object *parent, const char *key, int *err)
{
	struct json_object *o = json_object_new_object();

	put(parent, key, o, err);
	return *err ? NULL : o;
}

static struct json_object *new_arr(struct json_object *parent, const char *key, int *err)
{
	struct json_object *a = json_object_new_array();

	put(parent, key, a, err);
	return *err ? NULL : a;
}

static void funcs_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *a = new_arr(root, "functions", err);

	for (__u32 i = 0; i < m->nr_funcs && !*err; i++) {
		const struct trace_func *f = &m->funcs[i];
		struct json_object *o = json_object_new_object();

		append(a, o, err);
		if (*err)
			return;
		put_u64(o, "id", i, err);
		put(o, "lib", json_object_new_string(f->lib), err);
		put(o, "build_id", json_object_new_string(f->build_id), err);
		put(o, "symbol", json_object_new_string(f->symbol), err);
		put_u64(o, "offset", f->offset, err);
		if (!m->probe_classes)
			continue;
		put(o, "probe_class", json_object_new_string(
			probe_class_name(f->stepped ? DLPROF_PROBE_STEPPED : DLPROF_PROBE_EMULATED)), err);
		if (f->entry_only != ENTRY_ONLY_NO)
			put(o, "entry_only", json_object_new_string(entry_only_why_name(f->entry_only)), err);
	}
}

static void procs_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *a = new_arr(root, "processes", err);

	for (size_t i = 0; i < m->nr_procs && !*err; i++) {
		struct json_object *o = json_object_new_object();

		append(a, o, err);
		if (*err)
			return;
		put_u64(o, "pid", m->procs[i].pid, err);
		put(o, "comm", json_object_new_string(m->procs[i].comm), err);
		put_u64(o, "cgroup_id", m->procs[i].cgroup_id, err);
	}
}

static void threads_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *a = new_arr(root, "threads", err);

	for (size_t i = 0; i < m->nr_threads && !*err; i++) {
		struct json_object *o = json_object_new_object();

		append(a, o, err);
		if (*err)
			return;
		put_u64(o, "tid", m->threads[i].tid, err);
		put_u64(o, "pid", m->threads[i].pid, err);
		put(o, "comm", json_object_new_string(m->threads[i].comm), err);
	}
}

/* Only with callers: a trace recorded without --by caller has the key not at all. */
static void callers_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *a;

	if (!m->nr_callers)
		return;
	a = new_arr(root, "callers", err);
	for (size_t i = 0; i < m->nr_callers && !*err; i++) {
		struct json_object *o = json_object_new_object();

		append(a, o, err);
		if (*err)
			return;
		put_u64(o, "pid", m->callers[i].pid, err);
		put_u64(o, "addr", m->callers[i].addr, err);
		put(o, "module", json_object_new_string(m->callers[i].module), err);
		put(o, "symbol", json_object_new_string(m->callers[i].symbol), err);
	}
}

static void cpus_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *a = new_arr(root, "cpus", err);

	for (__u32 i = 0; i < m->nr_cpus && !*err; i++) {
		struct json_object *o = json_object_new_object();

		append(a, o, err);
		if (*err)
			return;
		put_u64(o, "cpu", i, err);
		put_u64(o, "ringbuf_drops", m->cpus[i].ringbuf_drops, err);
		put_u64(o, "write_lost", m->cpus[i].write_lost, err);
		put_u64(o, "blocks", m->cpus[i].blocks, err);
		put_u64(o, "records", m->cpus[i].records, err);
	}
}

static void misc_json(const struct trace_meta *m, struct json_object *root, int *err)
{
	struct json_object *o, *a;

	o = new_obj(root, "clock", err);
	if (o) {
		put(o, "source", json_object_new_string("CLOCK_MONOTONIC"), err);
		put_u64(o, "monotonic_start_ns", m->mono_start_ns, err);
		put(o, "realtime_offset_ns", json_object_new_int64(m->realtime_offset_ns), err);
		put_u64(o, "last_flush_ns", m->last_flush_ns, err);
	}
	put(root, "ended_cleanly", json_object_new_boolean(m->ended_cleanly), err);
	put(root, "closed", json_object_new_boolean(m->closed), err);
	o = new_obj(root, "writer", err);
	if (o) {
		put(o, "compression", json_object_new_string(
			m->compression == TRACE_COMP_ZLIB ? comp_names[TRACE_COMP_ZLIB]
							  : comp_names[TRACE_COMP_NONE]), err);
		put(o, "zlib_level", json_object_new_int(m->zlib_level), err);
		put_u64(o, "block_records", m->block_records, err);
		put_u64(o, "reorder_window_ns", m->reorder_window_ns, err);
	}
	if (m->attach_mode) {
		o = new_obj(root, "attach", err);
		if (o) {
			put(o, "mode", json_object_new_string(m->attach_mode), err);
			put(o, "ms", json_object_new_double(m->attach_ms), err);
			put_u64(o, "functions_skipped", m->functions_skipped, err);
		}
	}
	if (m->probe_pair_ns[DLPROF_PROBE_EMULATED] || m->probe_pair_ns[DLPROF_PROBE_STEPPED]) {
		o = new_obj(root, "probe_pair_ns", err);
		for (int k = 0; o && k < DLPROF_PROBE_CLASSES; k++)
			put_u64(o, probe_class_name((enum dlprof_probe_class)k), m->probe_pair_ns[k], err);
	}
	a = new_arr(root, "events", err);
	for (__u32 i = 0; a && i < m->nr_events; i++)
		append(a, json_object_new_string(m->events[i]), err);
	o = new_obj(root, "diag", err);
	if (o) {
		put_u64(o, "orphan_returns", m->orphan_returns, err);
		put_u64(o, "untimed_calls", m->untimed_calls, err);
		put_u64(o, "threads_unnamed", m->threads_unnamed, err);
	}
	if (m->merged) {
		o = new_obj(root, "merge", err);
		if (o) {
			put_u64(o, "records", m->merge.records, err);
			put_u64(o, "damaged_blocks", m->merge.damaged_blocks, err);
			put_u64(o, "skipped_bytes", m->merge.skipped_bytes, err);
			put_u64(o, "skipped_records", m->merge.skipped_records, err);
		}
	}
}

char *trace_meta__to_json(const struct trace_meta *m, size_t *len)
{
	struct json_object *root = json_object_new_object();
	const char *s;
	char *out = NULL, id[24];
	size_t n;
	int err = 0;

	if (!root)
		return NULL;
	put_u64(root, "format_version", m->version, &err);
	put_u64(root, "record_size", TRACE_RECORD_SIZE, &err);
	/* A string: JSON readers lose precision on integers past 2^53. */
	snprintf(id, sizeof(id), "%016" PRIx64, (uint64_t)m->recording_id);
	put(root, "recording_id", json_object_new_string(id), &err);
	misc_json(m, root, &err);
	funcs_json(m, root, &err);
	procs_json(m, root, &err);
	threads_json(m, root, &err);
	callers_json(m, root, &err);
	cpus_json(m, root, &err);
	if (err)
		goto cleanup;
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
					   JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!s)
		goto cleanup;
	n = strlen(s);
	out = malloc(n + 2);
	if (!out)
		goto cleanup;
	memcpy(out, s, n);
	out[n++] = '\n';
	out[n] = 0;
	*len = n;
cleanup:
	json_object_put(root);
	return out;
}

/* ---- from JSON ---- */

struct parse {
	char *err;
	size_t err_sz;
	bool failed;
};

static void fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	va_start(ap, fmt);
	vsnprintf(p->err, p->err_sz, fmt, ap);
	va_end(ap);
}

static struct json_object *get(struct parse *p, struct json_object *o, const char *ctx,
			       const char *key, enum json_type type, bool required)
{
	struct json_object *v;

	if (p->failed)
		return NULL;
	if (!json_object_object_get_ex(o, key, &v)) {
		if (required)
			fail(p, "%s has no \"%s\"", ctx, key);
		return NULL;
	}
	/* A double where an integer belongs is as wrong as a string. */
	if (!json_object_is_type(v, type)) {
		fail(p, "\"%s\" in %s is not %s", key, ctx, json_type_to_name(type));
		return NULL;
	}
	return v;
}

static __u64 get_u64(struct parse *p, struct json_object *o, const char *ctx, const char *key,
		     bool required)
{
	struct json_object *v = get(p, o, ctx, key, json_type_int, required);

	if (!v)
		return 0;
	if (json_object_get_int64(v) < 0) {
		fail(p, "\"%s\" in %s is negative", key, ctx);
		return 0;
	}
	return json_object_get_uint64(v);
}

static const char *get_str(struct parse *p, struct json_object *o, const char *ctx,
			   const char *key)
{
	struct json_object *v = get(p, o, ctx, key, json_type_string, true);

	return v ? json_object_get_string(v) : NULL;
}

static void nomem(struct parse *p, int err)
{
	if (err)
		fail(p, "out of memory");
}

static void parse_recording_id(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	const char *s = get_str(p, root, "the metadata", "recording_id");
	char *end;

	if (!s)
		return;
	errno = 0;
	m->recording_id = strtoull(s, &end, 16);
	if (strlen(s) != 16 || strspn(s, "0123456789abcdef") != 16 || errno || *end)
		fail(p, "\"recording_id\" is not 16 hex digits");
}

static void parse_clock(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *c = get(p, root, "the metadata", "clock", json_type_object, true), *v;

	if (!c)
		return;
	m->mono_start_ns = get_u64(p, c, "clock", "monotonic_start_ns", true);
	v = get(p, c, "clock", "realtime_offset_ns", json_type_int, true);
	if (v)
		m->realtime_offset_ns = json_object_get_int64(v);
	m->last_flush_ns = get_u64(p, c, "clock", "last_flush_ns", true);
}

static void parse_writer(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *w = get(p, root, "the metadata", "writer", json_type_object, false);
	const char *c;
	__u64 level;

	if (!w)
		return;
	c = get_str(p, w, "writer", "compression");
	if (c && !strcmp(c, comp_names[TRACE_COMP_ZLIB]))
		m->compression = TRACE_COMP_ZLIB;
	level = get_u64(p, w, "writer", "zlib_level", false);
	if (level > 9)
		fail(p, "zlib_level %" PRIu64 " in writer", (uint64_t)level);
	m->zlib_level = (int)level;
	m->block_records = (__u32)get_u64(p, w, "writer", "block_records", false);
	m->reorder_window_ns = get_u64(p, w, "writer", "reorder_window_ns", false);
}

static void parse_attach(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "attach", json_type_object, false);
	struct json_object *ms;
	const char *mode;

	if (!a)
		return;
	mode = get_str(p, a, "attach", "mode");
	ms = get(p, a, "attach", "ms", json_type_double, false);
	if (!ms)
		ms = get(p, a, "attach", "ms", json_type_int, false);
	if (mode)
		nomem(p, trace_meta__set_attach(m, mode, ms ? json_object_get_double(ms) : 0,
						get_u64(p, a, "attach", "functions_skipped", false)));
}

static void parse_events(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "events", json_type_array, true);
	size_t n;

	if (!a)
		return;
	n = json_object_array_length(a);
	if (n > DLPROF_MAX_EVENTS) {
		fail(p, "%zu events, at most %d can be recorded", n, DLPROF_MAX_EVENTS);
		return;
	}
	for (size_t i = 0; i < n && !p->failed; i++) {
		struct json_object *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			fail(p, "event %zu is not a string", i);
		else
			nomem(p, trace_meta__add_event(m, json_object_get_string(e)));
	}
}

/* "probe_class" and "entry_only": all functions say them, or none (a trace written before them). */
static void parse_func_probes(struct parse *p, struct json_object *f, const char *ctx, struct trace_meta *m,
			      __u32 id)
{
	struct json_object *c = get(p, f, ctx, "probe_class", json_type_string, false);
	struct json_object *e = get(p, f, ctx, "entry_only", json_type_string, false);
	int cls, why = ENTRY_ONLY_NO;

	if (p->failed)
		return;
	if (!c != !m->probe_classes && id) {
		fail(p, "%s %s \"probe_class\" where function 0 does%s", ctx, c ? "has" : "has no", c ? " not" : "");
		return;
	}
	if (!c)
		return;
	cls = probe_class_from_name(json_object_get_string(c));
	if (e)
		why = entry_only_why_from_name(json_object_get_string(e));
	if (cls < 0 || why < 0) {
		fail(p, "%s has an unknown %s", ctx, cls < 0 ? "probe_class" : "entry_only");
		return;
	}
	trace_meta__set_func_probes(m, id, cls == DLPROF_PROBE_STEPPED, (enum entry_only_why)why);
}

static void parse_funcs(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "functions", json_type_array, true);
	char ctx[48];

	for (size_t i = 0; a && i < json_object_array_length(a) && !p->failed; i++) {
		struct json_object *f = json_object_array_get_idx(a, i);
		const char *lib, *bid, *sym;
		__u64 id, off;
		int ret;

		snprintf(ctx, sizeof(ctx), "function %zu", i);
		if (!json_object_is_type(f, json_type_object)) {
			fail(p, "%s is not an object", ctx);
			return;
		}
		id = get_u64(p, f, ctx, "id", true);
		lib = get_str(p, f, ctx, "lib");
		bid = get_str(p, f, ctx, "build_id");
		sym = get_str(p, f, ctx, "symbol");
		off = get_u64(p, f, ctx, "offset", true);
		if (p->failed)
			return;
		/* Records name functions by index: ids must be exactly 0, 1, 2, ... */
		if (id != i) {
			fail(p, "%s has id %" PRIu64, ctx, (uint64_t)id);
			return;
		}
		ret = trace_meta__add_func(m, lib, bid, sym, off);
		nomem(p, ret < 0 ? ret : 0);
		if (ret >= 0)
			parse_func_probes(p, f, ctx, m, (__u32)ret);
	}
}

static void parse_procs(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "processes", json_type_array, true);
	char ctx[48];

	for (size_t i = 0; a && i < json_object_array_length(a) && !p->failed; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		const char *comm;
		__u64 pid, cg;

		snprintf(ctx, sizeof(ctx), "process %zu", i);
		if (!json_object_is_type(o, json_type_object)) {
			fail(p, "%s is not an object", ctx);
			return;
		}
		pid = get_u64(p, o, ctx, "pid", true);
		comm = get_str(p, o, ctx, "comm");
		cg = get_u64(p, o, ctx, "cgroup_id", true);
		if (p->failed)
			return;
		if (pid > UINT32_MAX) {
			fail(p, "%s has pid %" PRIu64, ctx, (uint64_t)pid);
			return;
		}
		nomem(p, trace_meta__set_process(m, (__u32)pid, comm, cg));
	}
}

/* Optional: traces written before threads were named have none (same format version). */
static void parse_threads(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "threads", json_type_array, false);
	char ctx[48];

	for (size_t i = 0; a && i < json_object_array_length(a) && !p->failed; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		const char *comm;
		__u64 tid, pid;

		snprintf(ctx, sizeof(ctx), "thread %zu", i);
		if (!json_object_is_type(o, json_type_object)) {
			fail(p, "%s is not an object", ctx);
			return;
		}
		tid = get_u64(p, o, ctx, "tid", true);
		pid = get_u64(p, o, ctx, "pid", true);
		comm = get_str(p, o, ctx, "comm");
		if (p->failed)
			return;
		if (tid > UINT32_MAX || pid > UINT32_MAX) {
			fail(p, "%s has tid %" PRIu64 " pid %" PRIu64, ctx, (uint64_t)tid, (uint64_t)pid);
			return;
		}
		nomem(p, trace_meta__set_thread(m, (__u32)tid, (__u32)pid, comm));
	}
}

/* Optional: only traces recorded --by caller have them. */
static void parse_callers(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "callers", json_type_array, false);
	char ctx[48];

	for (size_t i = 0; a && i < json_object_array_length(a) && !p->failed; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		const char *module, *symbol;
		__u64 pid, addr;

		snprintf(ctx, sizeof(ctx), "caller %zu", i);
		if (!json_object_is_type(o, json_type_object)) {
			fail(p, "%s is not an object", ctx);
			return;
		}
		pid = get_u64(p, o, ctx, "pid", true);
		addr = get_u64(p, o, ctx, "addr", true);
		module = get_str(p, o, ctx, "module");
		symbol = get_str(p, o, ctx, "symbol");
		if (p->failed)
			return;
		if (pid > UINT32_MAX) {
			fail(p, "%s has pid %" PRIu64, ctx, (uint64_t)pid);
			return;
		}
		nomem(p, trace_meta__set_caller(m, (__u32)pid, addr, module, symbol));
	}
}

static void parse_cpus(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *a = get(p, root, "the metadata", "cpus", json_type_array, true);
	size_t n;
	char ctx[48];

	if (!a)
		return;
	n = json_object_array_length(a);
	if (!n || n > TRACE_MAX_CPUS) {
		fail(p, "%zu CPUs (1 to %u expected)", n, TRACE_MAX_CPUS);
		return;
	}
	nomem(p, trace_meta__set_nr_cpus(m, (__u32)n));
	for (size_t i = 0; i < n && !p->failed; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);

		snprintf(ctx, sizeof(ctx), "cpu %zu", i);
		if (!json_object_is_type(o, json_type_object)) {
			fail(p, "%s is not an object", ctx);
			return;
		}
		if (get_u64(p, o, ctx, "cpu", true) != i && !p->failed)
			fail(p, "%s is out of order", ctx);
		m->cpus[i].ringbuf_drops = get_u64(p, o, ctx, "ringbuf_drops", true);
		m->cpus[i].write_lost = get_u64(p, o, ctx, "write_lost", false);
		m->cpus[i].blocks = get_u64(p, o, ctx, "blocks", true);
		m->cpus[i].records = get_u64(p, o, ctx, "records", true);
	}
}

static void parse_rest(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	struct json_object *o, *v;

	v = get(p, root, "the metadata", "ended_cleanly", json_type_boolean, true);
	m->ended_cleanly = v && json_object_get_boolean(v);
	/* Traces written before the field: closed when they ended cleanly. */
	v = get(p, root, "the metadata", "closed", json_type_boolean, false);
	m->closed = v ? json_object_get_boolean(v) : m->ended_cleanly;
	o = get(p, root, "the metadata", "diag", json_type_object, false);
	if (o) {
		m->orphan_returns = get_u64(p, o, "diag", "orphan_returns", false);
		m->untimed_calls = get_u64(p, o, "diag", "untimed_calls", false);
		m->threads_unnamed = get_u64(p, o, "diag", "threads_unnamed", false);
	}
	o = get(p, root, "the metadata", "probe_pair_ns", json_type_object, false);
	for (int k = 0; o && k < DLPROF_PROBE_CLASSES; k++)
		m->probe_pair_ns[k] = get_u64(p, o, "probe_pair_ns", probe_class_name((enum dlprof_probe_class)k), true);
	o = get(p, root, "the metadata", "merge", json_type_object, false);
	if (o) {
		m->merged = true;
		m->merge.records = get_u64(p, o, "merge", "records", true);
		m->merge.damaged_blocks = get_u64(p, o, "merge", "damaged_blocks", true);
		m->merge.skipped_bytes = get_u64(p, o, "merge", "skipped_bytes", true);
		m->merge.skipped_records = get_u64(p, o, "merge", "skipped_records", true);
	}
}

static void parse_root(struct parse *p, struct json_object *root, struct trace_meta *m)
{
	__u64 v;

	if (!json_object_is_type(root, json_type_object)) {
		fail(p, "not a JSON object");
		return;
	}
	v = get_u64(p, root, "the metadata", "format_version", true);
	if (!p->failed && v != TRACE_FORMAT_VERSION) {
		fail(p, "format version %" PRIu64 ", this build reads version %d", (uint64_t)v,
		     TRACE_FORMAT_VERSION);
		return;
	}
	v = get_u64(p, root, "the metadata", "record_size", true);
	if (!p->failed && v != TRACE_RECORD_SIZE)
		fail(p, "record size %" PRIu64 ", expected %d", (uint64_t)v, TRACE_RECORD_SIZE);
	parse_recording_id(p, root, m);
	parse_clock(p, root, m);
	parse_writer(p, root, m);
	parse_attach(p, root, m);
	parse_events(p, root, m);
	parse_funcs(p, root, m);
	parse_procs(p, root, m);
	parse_threads(p, root, m);
	parse_callers(p, root, m);
	parse_cpus(p, root, m);
	parse_rest(p, root, m);
}

int trace_meta__parse(struct trace_meta **out, const char *text, size_t len,
		      char *err, size_t err_sz)
{
	struct parse p = { .err = err, .err_sz = err_sz };
	struct json_tokener *tok = NULL;
	struct json_object *root = NULL;
	struct trace_meta *m = NULL;
	size_t end;
	int ret = -EINVAL;

	*out = NULL;
	if (len > TRACE_META_MAX_BYTES || len > INT32_MAX) {
		fail(&p, "metadata of %zu bytes is too large", len);
		goto cleanup;
	}
	m = trace_meta__new();
	tok = json_tokener_new();
	if (!m || !tok) {
		ret = -ENOMEM;
		goto cleanup;
	}
	root = json_tokener_parse_ex(tok, text, (int)len);
	if (!root) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		fail(&p, "not valid JSON (%s)", e == json_tokener_continue ? "cut short"
									  : json_tokener_error_desc(e));
		goto cleanup;
	}
	for (end = json_tokener_get_parse_end(tok); end < len; end++)
		if (!strchr(" \t\r\n", text[end]) || !text[end]) {
			fail(&p, "trailing data after the JSON object");
			goto cleanup;
		}
	parse_root(&p, root, m);
	if (p.failed)
		goto cleanup;
	*out = m;
	m = NULL;
	ret = 0;
cleanup:
	json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	trace_meta__free(m);
	return ret;
}

/*
 * Each metadata file is written to at least this size, padded with
 * spaces (JSON allows trailing whitespace), and twice what its text needs:
 * rewriting it then fills blocks the file already owns, so the final
 * losses still reach the disk once the shards have filled it.
 */
#define META_MIN_BYTES	(64u << 10)

static size_t meta_capacity(size_t len, __u64 have)
{
	size_t cap;

	if (have >= len)
		return (size_t)have;	/* never shrunk: that would give the room away */
	cap = 2 * len > META_MIN_BYTES ? 2 * len : META_MIN_BYTES;
	cap = (cap + 4095) & ~(size_t)4095;
	return cap > TRACE_META_MAX_BYTES ? (len > TRACE_META_MAX_BYTES ? len : TRACE_META_MAX_BYTES) : cap;
}

/*
 * The new text into the spare file, then the spare and meta.json change
 * places in one step (RENAME_EXCHANGE, Linux 3.15, commit da1ce0670c14):
 * a reader, or a crash, sees the old or the new metadata, never half of
 * one, and the old one's blocks stay ours as the next spare. Where the
 * filesystem cannot exchange, or there is no meta.json yet, a rename.
 */
static int swap_in(int dirfd)
{
	if (!renameat2(dirfd, META_TMP_FILE, dirfd, TRACE_META_FILE, RENAME_EXCHANGE))
		return 0;
	if (errno != ENOENT && errno != EINVAL && errno != ENOSYS)
		return -errno;
	return renameat(dirfd, META_TMP_FILE, dirfd, TRACE_META_FILE) ? -errno : 0;
}

void trace_meta__drop_spare(int dirfd)
{
	unlinkat(dirfd, META_TMP_FILE, 0);
}

int trace_meta__write(const struct trace_meta *m, int dirfd)
{
	size_t len, cap;
	char *text = trace_meta__to_json(m, &len), *buf = NULL;
	struct stat st;
	int fd, err;

	if (!text)
		return -ENOMEM;
	/* Never through a link planted in the directory. */
	fd = openat(dirfd, META_TMP_FILE, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		goto cleanup;
	}
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto cleanup;
	}
	cap = meta_capacity(len, (__u64)st.st_size);
	buf = malloc(cap);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	memcpy(buf, text, len);
	memset(buf + len, ' ', cap - len);
	buf[cap - 1] = '\n';
	/* No fsync: the page cache outlives the process, which is the failure we guard. */
	err = pwrite_full(fd, buf, cap, 0);
	if (close(fd) && !err)
		err = -errno;
	fd = -1;
	if (!err)
		err = swap_in(dirfd);
cleanup:
	if (fd >= 0)
		close(fd);
	free(buf);
	free(text);
	return err;
}

int trace_meta__load(struct trace_meta **out, int dirfd, char *err, size_t err_sz)
{
	struct stat st;
	char *buf = NULL;
	size_t got = 0;
	int fd, ret;

	*out = NULL;
	fd = openat(dirfd, TRACE_META_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, err_sz, "%s", strerror(errno));
		return ret;
	}
	if (fstat(fd, &st)) {
		ret = -errno;
		snprintf(err, err_sz, "%s", strerror(errno));
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || (__u64)st.st_size > TRACE_META_MAX_BYTES) {
		snprintf(err, err_sz, "not a regular file of at most %u bytes", TRACE_META_MAX_BYTES);
		ret = -EINVAL;
		goto cleanup;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		ret = -ENOMEM;
		snprintf(err, err_sz, "out of memory");
		goto cleanup;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			snprintf(err, err_sz, "%s", strerror(errno));
			goto cleanup;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	ret = trace_meta__parse(out, buf, got, err, err_sz);
cleanup:
	free(buf);
	close(fd);
	return ret;
}
