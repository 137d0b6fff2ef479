// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "trace/trace_input.h"
#include "trace_testutil.h"

uint64_t rnd(uint64_t *s)
{
	/* xorshift64*: enough for test data, reproducible from the seed */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

static int by_return(const void *a, const void *b)
{
	const struct call_record *x = a, *y = b;
	uint64_t ex = x->ts_ns + x->dur_ns, ey = y->ts_ns + y->dur_ns;

	if (ex != ey)
		return ex < ey ? -1 : 1;
	return x->counters[DLPROF_MAX_EVENTS - 1] < y->counters[DLPROF_MAX_EVENTS - 1] ? -1 : 1;
}

struct call_record *gen_calls(const struct gen_opts *g)
{
	struct call_record *r = calloc(g->nr_calls ? g->nr_calls : 1, sizeof(*r));
	uint64_t s = g->seed | 1, *ts = calloc(g->nr_cpus, sizeof(*ts));

	if (!r || !ts) {
		free(r);
		free(ts);
		return NULL;
	}
	for (uint32_t c = 0; c < g->nr_cpus; c++)
		ts[c] = 1000000000ull + rnd(&s) % 1000;
	for (size_t i = 0; i < g->nr_calls; i++) {
		uint32_t c = (uint32_t)(rnd(&s) % g->nr_cpus);
		struct call_record *p = &r[i];

		/* Strictly growing per CPU: equal timestamps would make "the" sorted order ambiguous. */
		ts[c] += 1 + rnd(&s) % (g->max_gap_ns + 1);
		p->type = REC_CALL;
		p->cpu = c;
		p->ts_ns = ts[c];
		if (g->long_permille && rnd(&s) % 1000 < g->long_permille)
			p->dur_ns = g->long_dur_ns + rnd(&s) % (g->long_dur_ns + 1);
		else
			p->dur_ns = rnd(&s) % (g->max_dur_ns + 1);
		p->oncpu_ns = p->dur_ns / 2;
		p->func_id = (uint32_t)(rnd(&s) % (g->nr_funcs ? g->nr_funcs : 1));
		p->pid = 100 + (uint32_t)(rnd(&s) % 3);
		p->tid = p->pid + (uint32_t)(rnd(&s) % 4);
		p->depth = (uint8_t)(rnd(&s) % 4);
		if (rnd(&s) % 50 == 0)
			p->flags = CALL_F_UNMATCHED;
		if (p->flags & CALL_F_UNMATCHED)
			p->dur_ns = p->oncpu_ns = 0;
		p->nr_counters = g->nr_events;
		for (uint32_t k = 0; k < g->nr_events && k < DLPROF_MAX_EVENTS - 1; k++)
			p->counters[k] = rnd(&s) % 100;
		p->counters[DLPROF_MAX_EVENTS - 1] = i;
	}
	qsort(r, g->nr_calls, sizeof(*r), by_return);
	free(ts);
	return r;
}

static const char *const event_names[] = {
	"page-faults", "context-switches", "cpu-migrations", "task-clock", "minor-faults", "seq",
};

int feed_trace(const char *dir, const struct trace_writer_opts *opts,
	       const struct call_record *recs, size_t n, uint64_t flush_every_ns,
	       uint32_t nr_funcs, uint32_t nr_events)
{
	struct trace_writer_opts o = *opts;
	struct trace_writer *w;
	struct trace_meta *m;
	uint64_t next_flush = 0;
	char lib[64], sym[32];
	int err = 0;

	/* The generated clock starts at 1 s: make that the start of the recording. */
	if (!o.mono_start_ns)
		o.mono_start_ns = 1000000000ull;
	w = trace_writer__new(dir, &o);
	if (!w)
		return -errno;
	m = trace_writer__meta(w);
	for (uint32_t k = 0; k < nr_events && !err; k++)
		err = trace_meta__add_event(m, event_names[k]);
	for (uint32_t f = 0; f < nr_funcs && !err; f++) {
		snprintf(lib, sizeof(lib), "/usr/lib/libtest%u.so.1", f % 3);
		snprintf(sym, sizeof(sym), "func_%u", f);
		err = trace_meta__add_func(m, lib, "0123abcd", sym, 0x1000 + f * 16);
		err = err < 0 ? err : 0;
	}
	for (uint32_t p = 100; p < 103 && !err; p++)
		err = trace_meta__set_process(m, p, "testprog", 42);
	if (!err)
		err = trace_meta__set_attach(m, "multi", 1.5, 0);
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t now = recs[i].ts_ns + recs[i].dur_ns;

		if (!next_flush)
			next_flush = now + flush_every_ns;
		if (now >= next_flush) {
			err = trace_writer__flush(w, now, NULL);
			next_flush = now + flush_every_ns;
		}
		if (!err)
			err = trace_writer__add(w, &recs[i]);
	}
	if (!err)
		err = trace_writer__flush(w, n ? recs[n - 1].ts_ns + recs[n - 1].dur_ns : 0, NULL);
	if (!err)
		err = trace_writer__close(w);
	trace_writer__free(w);
	return err;
}

struct call_record *read_trace(const char *path, size_t *n, size_t *nr_damage)
{
	const struct call_record *r;
	struct call_record *out = NULL;
	struct trace_input *in;
	size_t cap = 0;
	char err[256];
	int ret;

	*n = 0;
	if (trace_input__open(&in, path, err, sizeof(err))) {
		fprintf(stderr, "read_trace: %s\n", err);
		return NULL;
	}
	while ((ret = trace_input__next(in, &r)) > 0) {
		if (*n == cap) {
			struct call_record *p;

			cap = cap ? 2 * cap : 1024;
			p = realloc(out, cap * sizeof(*p));
			if (!p) {
				ret = -ENOMEM;
				break;
			}
			out = p;
		}
		out[(*n)++] = *r;
	}
	if (nr_damage)
		*nr_damage = trace_merge__nr_damage(trace_input__merge(in));
	trace_input__free(in);
	if (ret < 0) {
		free(out);
		return NULL;
	}
	return out ? out : calloc(1, sizeof(*out));
}

static int canon_cmp(const void *a, const void *b)
{
	const struct call_record *x = a, *y = b;

	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	return memcmp(x, y, sizeof(*x));
}

void sort_records(struct call_record *r, size_t n)
{
	qsort(r, n, sizeof(*r), canon_cmp);
}

bool ts_ordered(const struct call_record *r, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (r[i].ts_ns < r[i - 1].ts_ns)
			return false;
	return true;
}

char *make_tmpdir(void)
{
	const char *base = getenv("TMPDIR");
	char *p;

	if (asprintf(&p, "%s/dlprof-trace-XXXXXX", base && *base ? base : "/tmp") < 0)
		return NULL;
	if (!mkdtemp(p)) {
		free(p);
		return NULL;
	}
	return p;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void remove_tree(const char *path)
{
	if (path)
		nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? -1 : st.st_size;
}
