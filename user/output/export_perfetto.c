// SPDX-License-Identifier: GPL-2.0-only
/*
 * Chrome Trace Event JSON (the format ui.perfetto.dev and chrome://tracing
 * load): one complete event ("X") per timed call on its thread's track, an
 * instant ("i") per call without a duration, metadata events ("M") naming
 * processes and threads. Streamed: each call is written as it comes; what
 * is kept is one entry per thread and process met. docs/export-perfetto.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "output/export_formats.h"
#include "util/u64_map.h"
#include "util/path.h"

struct export_state {
	struct u64_map seen;		/* threads (pid << 32 | tid) and processes (PROC_KEY) named so far */
	bool any;			/* an event is written: the next needs a comma */
	bool started;
	uint64_t base_ns;		/* time 0: the recording's start, or the first call when it entered before */
	int64_t last_ns;		/* the latest end of a call, from base_ns: where losses are shown */
	int err;
};

/* A process's key cannot be a thread's: no thread has tid 2^32 - 1. */
#define PROC_KEY(pid) ((uint64_t)(pid) << 32 | 0xffffffffu)

static void event_start(FILE *out, struct export_state *s, const char *ph)
{
	fputs(s->any ? ",\n{\"ph\":\"" : "{\"ph\":\"", out);
	fputs(ph, out);
	fputs("\",", out);
	s->any = true;
}

static void name_track(FILE *out, struct export_state *s, const char *what, uint32_t pid, uint32_t tid,
		       const char *name)
{
	event_start(out, s, "M");
	fprintf(out, "\"name\":\"%s\",\"pid\":%u,\"tid\":%u,\"args\":{\"name\":", what, pid, tid);
	export_json_string(out, name);
	fputs("}}", out);
}

/*
 * Names the process (comm, else its pid) and the thread the first time
 * each is met: the thread's own name and tid ("worker-3 4242") where the
 * trace has it, else its process's comm and tid (traces from before thread
 * names, a thread the kernel's map had no room for).
 */
static void name_thread(FILE *out, const struct export_head *h, uint32_t pid, uint32_t tid)
{
	struct export_state *s = h->state;
	const char *comm = export_comm(h, pid), *own = export_thread_comm(h, pid, tid);
	uint64_t key = (uint64_t)pid << 32 | tid;
	char name[64];
	size_t v;

	if (!u64_map_get(&s->seen, key, &v))
		return;
	if (u64_map_get(&s->seen, PROC_KEY(pid), &v)) {
		snprintf(name, sizeof(name), "%u", pid);
		name_track(out, s, "process_name", pid, pid, comm ? comm : name);
		if (u64_map_put(&s->seen, PROC_KEY(pid), 0))
			s->err = -ENOMEM;
	}
	if (own)
		comm = own;
	snprintf(name, sizeof(name), "%.40s%s%u", comm ? comm : "", comm ? " " : "", tid);
	name_track(out, s, "thread_name", pid, tid, name);
	if (u64_map_put(&s->seen, key, 0))
		s->err = -ENOMEM;
}

int perfetto_begin(FILE *out, struct export_head *h)
{
	h->state = calloc(1, sizeof(*h->state));
	if (!h->state)
		return -ENOMEM;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out);
	return 0;
}

static const char *flag_of(const struct export_call *c)
{
	if (c->unmatched)
		return "unmatched";
	if (c->entry_only)
		return "entry-only";
	if (c->unwound)
		return "unwound";
	return NULL;
}

static void call_args(FILE *out, const struct export_head *h, const struct export_call *c, const char *flag)
{
	fputs(",\"args\":{\"lib\":", out);
	export_json_string(out, c->lib);
	fprintf(out, ",\"depth\":%u,\"cpu\":%u", c->depth, c->cpu);
	if (c->caller) {
		fputs(",\"caller\":", out);
		export_json_string(out, c->caller);
		fputs(",\"caller_module\":", out);
		export_json_string(out, c->caller_module);
	}
	if (flag) {
		fprintf(out, ",\"flag\":\"%s\"}}", flag);
		return;
	}
	fprintf(out, ",\"oncpu_ns\":%" PRIu64, c->oncpu_ns);
	for (size_t k = 0; k < h->nr_events; k++) {
		fputc(',', out);
		export_json_string(out, h->events[k]);
		fprintf(out, ":%" PRIu64, c->counters[k]);
	}
	if (c->scaled)
		fputs(",\"scaled\":true", out);
	fputs("}}", out);
}

void perfetto_record(FILE *out, const struct export_head *h, const struct export_call *c)
{
	struct export_state *s = h->state;
	const char *flag = flag_of(c);
	int64_t ts;

	/* The first call is the oldest (entry order): no timestamp comes out negative, which viewers misplace. */
	if (!s->started) {
		s->started = true;
		s->base_ns = c->ts_ns < h->start_ns ? c->ts_ns : h->start_ns;
	}
	ts = (int64_t)(c->ts_ns - s->base_ns);
	name_thread(out, h, c->pid, c->tid);
	/* Untimed calls have no end: an instant on their thread, scoped to it. */
	event_start(out, s, flag ? "i" : "X");
	if (flag)
		fputs("\"s\":\"t\",", out);
	fputs("\"name\":", out);
	export_json_string(out, c->func);
	fputs(",\"cat\":", out);
	export_json_string(out, *c->lib ? path_base(c->lib) : "?");
	fprintf(out, ",\"pid\":%u,\"tid\":%u,\"ts\":", c->pid, c->tid);
	export_us(out, ts);
	if (!flag) {
		fputs(",\"dur\":", out);
		export_us(out, (int64_t)c->dur_ns);
	}
	call_args(out, h, c, flag);
	if (ts + (int64_t)c->dur_ns > s->last_ns)
		s->last_ns = ts + (int64_t)c->dur_ns;
}

/* Losses have no place in time: global instants at the end of what was read, where they show across every track. */
void perfetto_loss(FILE *out, const struct export_head *h, const struct export_loss *l)
{
	struct export_state *s = h->state;

	event_start(out, s, "i");
	fputs("\"s\":\"g\",\"name\":", out);
	export_json_string(out, l->what);
	fputs(",\"cat\":\"dlprof-loss\",\"pid\":0,\"tid\":0,\"ts\":", out);
	export_us(out, s->last_ns);
	fputs(",\"args\":{\"source\":", out);
	export_json_string(out, l->source);
	fprintf(out, ",\"records\":%" PRIu64 ",\"bytes\":%" PRIu64 "}}", l->records, l->bytes);
}

int perfetto_end(FILE *out, struct export_head *h)
{
	struct export_state *s = h->state;
	int err = s->err;

	fputs("\n]}\n", out);
	u64_map_free(&s->seen);
	free(s);
	h->state = NULL;
	return err;
}
