// SPDX-License-Identifier: GPL-2.0-only
/*
 * Trace write, size and merge figures: writes SHARDS x RECORDS calls shaped
 * like a real recording (nested calls that arrive in return order), then
 * merges them in a fresh process so its peak RSS is the merge's alone.
 * `--levels` compares zlib levels on the same records instead.
 *
 *   merge_bench [--shards N] [--records N] [--dir DIR] [--keep]
 *   merge_bench --levels [--records N]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "trace/trace_block.h"
#include "trace/trace_dlt.h"
#include "trace/trace_input.h"
#include "trace/trace_writer.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ull;
}

/*
 * One CPU's calls: an outer call holding 0-7 inner calls, on one of a few
 * threads. Inner records arrive before their outer one, whose ts is older:
 * the disorder the writer's reorder window exists for. Durations spread
 * from ~100 ns to ~1 ms; counters small, as software events are.
 */
struct gen {
	uint64_t s;
	uint64_t t;
	uint32_t cpu;
	struct call_record pend[8];
	int nr_pend;
	int next;
};

static void gen_tree(struct gen *g)
{
	uint32_t pid = 1000 + (uint32_t)(rnd(&g->s) % 2), tid = pid + (uint32_t)(rnd(&g->s) % 4);
	int inner = (int)(rnd(&g->s) % 8);
	uint64_t t0 = g->t, t = t0 + 50;

	for (int i = 0; i <= inner; i++) {
		struct call_record *r = &g->pend[i];
		uint64_t dur = 80 + (rnd(&g->s) % 4000 << (rnd(&g->s) % 8));

		memset(r, 0, sizeof(*r));
		r->type = REC_CALL;
		r->cpu = g->cpu;
		r->pid = pid;
		r->tid = tid;
		r->nr_counters = 2;
		if (i < inner) {
			r->depth = 1;
			r->func_id = 10 + (uint32_t)(rnd(&g->s) % 40);
			r->ts_ns = t;
			r->dur_ns = dur;
			t += dur + 30;
		} else {
			r->func_id = (uint32_t)(rnd(&g->s) % 10);
			r->ts_ns = t0;
			r->dur_ns = t - t0 + 40;
		}
		r->oncpu_ns = r->dur_ns - r->dur_ns / 16;
		r->counters[0] = rnd(&g->s) % 16 ? 0 : 1 + rnd(&g->s) % 3;	/* page faults */
		r->counters[1] = rnd(&g->s) % 64 ? 0 : 1;			/* context switches */
	}
	g->nr_pend = inner + 1;
	g->next = 0;
	g->t = t + 200 + rnd(&g->s) % 2000;
}

static const struct call_record *gen_next(struct gen *g)
{
	if (g->next == g->nr_pend)
		gen_tree(g);
	return &g->pend[g->next++];
}

static uint64_t dir_bytes(const char *dir, unsigned shards)
{
	char path[4096];
	struct stat st;
	uint64_t n = 0;

	for (unsigned c = 0; c < shards; c++) {
		snprintf(path, sizeof(path), "%s/cpu%u.shard", dir, c);
		if (!stat(path, &st))
			n += (uint64_t)st.st_size;
	}
	return n;
}

static int write_trace(const char *dir, unsigned shards, uint64_t per_shard)
{
	struct trace_writer_opts o = { .nr_cpus = shards, .overwrite = true };
	struct trace_writer_stats st;
	struct trace_writer *w;
	struct gen *g = calloc(shards, sizeof(*g));
	uint64_t total = (uint64_t)shards * per_shard, flushed_at = 0;
	double t0;
	int err = 0;

	w = trace_writer__new(dir, &o);
	if (!w || !g) {
		fprintf(stderr, "merge_bench: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (unsigned c = 0; c < shards; c++) {
		g[c].s = 0x9e3779b97f4a7c15ull * (c + 1);
		g[c].t = 1000000000ull;
		g[c].cpu = c;
	}
	for (int f = 0; f < 50; f++) {
		char sym[16];

		snprintf(sym, sizeof(sym), "fn_%d", f);
		trace_meta__add_func(trace_writer__meta(w), "/usr/lib/libbench.so.1", "", sym,
				     (uint64_t)f * 64);
	}
	trace_meta__add_event(trace_writer__meta(w), "page-faults");
	trace_meta__add_event(trace_writer__meta(w), "context-switches");
	t0 = now_s();
	/* Round-robin over CPUs, as a ringbuf interleaves them. */
	for (uint64_t i = 0; i < per_shard && !err; i++) {
		for (unsigned c = 0; c < shards && !err; c++)
			err = trace_writer__add(w, gen_next(&g[c]));
		/*
		 * A flush per second of trace time, as the recorder does. Each
		 * CPU's clock runs at its own pace here; "now" is the slowest
		 * one, the time up to which every CPU has delivered its calls.
		 */
		if (!(i & 1023)) {
			uint64_t now = g[0].t;

			for (unsigned c = 1; c < shards; c++)
				if (g[c].t < now)
					now = g[c].t;
			if (now - flushed_at > 1000000000ull) {
				flushed_at = now;
				err = trace_writer__flush(w, now, NULL);
			}
		}
	}
	if (!err)
		err = trace_writer__close(w);
	if (err) {
		fprintf(stderr, "merge_bench: writing failed: %s\n", strerror(-err));
		return 1;
	}
	trace_writer__stats(w, &st);
	printf("write: %" PRIu64 " records in %.2f s: %.2f M records/s (generation included), "
	       "%" PRIu64 " late\n", total, now_s() - t0, (double)total / (now_s() - t0) / 1e6,
	       (uint64_t)st.late_records);
	printf("shards: %" PRIu64 " bytes, %.2f bytes/record (raw %zu)\n", dir_bytes(dir, shards),
	       (double)dir_bytes(dir, shards) / (double)total, sizeof(struct call_record));
	trace_writer__free(w);
	free(g);
	return 0;
}

/* In a fresh process: the merge of dir into out (or only reading it when out is NULL). */
static int merge_only(const char *dir, const char *out)
{
	const struct call_record *r;
	struct trace_merge_stats ms;
	struct trace_input *in;
	struct trace_meta *meta;
	struct dlt_writer *w = NULL;
	volatile uint64_t sum = 0;
	uint64_t n = 0;
	char err[512];
	double t0;
	int ret;

	if (trace_input__open(&in, dir, err, sizeof(err))) {
		fprintf(stderr, "merge_bench: %s\n", err);
		return 1;
	}
	if (out && !(w = dlt_writer__new(out, TRACE_COMP_ZLIB, 0, 0))) {
		fprintf(stderr, "merge_bench: %s: %s\n", out, strerror(errno));
		return 1;
	}
	t0 = now_s();
	while ((ret = trace_input__next(in, &r)) > 0) {
		n++;
		sum += r->dur_ns;	/* touch the record, as a consumer would */
		if (w && dlt_writer__add(w, r))
			return 1;
	}
	if (ret < 0)
		return 1;
	if (w) {
		meta = trace_meta__dup(trace_input__meta(in));
		if (!meta || dlt_writer__finish(w, meta))
			return 1;
		trace_meta__free(meta);
	}
	trace_merge__stats(trace_input__merge(in), &ms);
	printf("%s: %" PRIu64 " records in %.2f s: %.2f M records/s; at most %u blocks "
	       "(%.1f KiB) decoded at once, %u runs\n", out ? "merge to .dlt" : "merge, read only",
	       n, now_s() - t0, (double)n / (now_s() - t0) / 1e6, ms.max_open_blocks,
	       (double)ms.max_open_bytes / 1024, ms.nr_runs);
	if (w) {
		printf("merged file: %" PRIu64 " bytes, %.2f bytes/record\n", (uint64_t)dlt_writer__bytes(w),
		       (double)dlt_writer__bytes(w) / (double)n);
		dlt_writer__free(w);
	}
	trace_input__free(in);
	return 0;
}

static int run_child(const char *self, const char *dir, const char *out)
{
	struct rusage ru;
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		execl(self, self, "--merge-only", dir, out, (char *)NULL);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	printf("  peak RSS of that process: %.1f MiB\n", (double)ru.ru_maxrss / 1024);
	return 0;
}

/* Bytes per record and speed of each zlib level on the same generated records. */
static int levels(uint64_t nr)
{
	static const char *const modes[] = { "none", "zlib:1", "zlib:2", "zlib:3", "zlib:4",
					     "zlib:6", "zlib:9" };
	struct call_record *recs = malloc(nr * sizeof(*recs)), *out = malloc(1024 * sizeof(*out));
	struct gen g = { .s = 42, .t = 1000000000ull };
	struct block_decoder *dec = block_decoder__new();

	if (!recs || !out || !dec)
		return 1;
	/* Sorted blocks, as the writer produces them. */
	for (uint64_t i = 0; i < nr; i++)
		recs[i] = *gen_next(&g);
	for (uint64_t i = 1; i < nr; i++)
		for (uint64_t j = i; j > 0 && recs[j].ts_ns < recs[j - 1].ts_ns; j--) {
			struct call_record t = recs[j];

			recs[j] = recs[j - 1];
			recs[j - 1] = t;
		}
	printf("%-7s %12s %14s %14s\n", "level", "bytes/record", "encode Mrec/s", "decode Mrec/s");
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		enum trace_compression comp;
		struct block_encoder *e;
		uint64_t bytes = 0;
		double te = 0, td = 0, t;
		int level;

		trace_compression_parse(modes[m], &comp, &level);
		e = block_encoder__new(comp, level ? level : 1);
		for (uint64_t i = 0; i + 1024 <= nr; i += 1024) {
			struct trace_block_header h;
			const void *buf;
			size_t len;

			t = now_s();
			block_encoder__encode(e, recs + i, 1024, 0, &buf, &len);
			te += now_s() - t;
			bytes += len;
			memcpy(&h, buf, sizeof(h));
			t = now_s();
			if (block_decoder__decode(dec, &h, (const char *)buf + sizeof(h), out))
				return 1;
			td += now_s() - t;
		}
		printf("%-7s %12.2f %14.2f %14.2f\n", modes[m], (double)bytes / (double)(nr / 1024 * 1024),
		       (double)(nr / 1024 * 1024) / te / 1e6, (double)(nr / 1024 * 1024) / td / 1e6);
		block_encoder__free(e);
	}
	block_decoder__free(dec);
	free(recs);
	free(out);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "shards", required_argument, NULL, 's' },
		{ "records", required_argument, NULL, 'n' },
		{ "dir", required_argument, NULL, 'd' },
		{ "keep", no_argument, NULL, 'k' },
		{ "levels", no_argument, NULL, 'l' },
		{ "merge-only", no_argument, NULL, 'm' },
		{ 0 },
	};
	unsigned shards = 8;
	uint64_t records = 5000000;
	const char *dir = NULL;
	bool keep = false, lv = false, mo = false;
	char tmpl[] = "/tmp/merge_bench.XXXXXX", out[4200];
	int c, ret;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': shards = (unsigned)strtoul(optarg, NULL, 0); break;
		case 'n': records = strtoull(optarg, NULL, 0); break;
		case 'd': dir = optarg; break;
		case 'k': keep = true; break;
		case 'l': lv = true; break;
		case 'm': mo = true; break;
		default: return 2;
		}
	}
	if (mo)
		return merge_only(argv[optind], optind + 1 < argc && *argv[optind + 1] ? argv[optind + 1] : NULL);
	if (lv)
		return levels(records < 1024 ? 1024 : records > 2000000 ? 2000000 : records);
	if (!dir && !(dir = mkdtemp(tmpl))) {
		perror("merge_bench: mkdtemp");
		return 1;
	}
	printf("%u shards x %" PRIu64 " records in %s\n", shards, records, dir);
	ret = write_trace(dir, shards, records);
	snprintf(out, sizeof(out), "%s.dlt", dir);
	if (!ret)
		ret = run_child("/proc/self/exe", dir, "");
	if (!ret)
		ret = run_child("/proc/self/exe", dir, out);
	if (!keep) {
		char path[4200];

		unlink(out);
		for (unsigned s = 0; s < shards; s++) {
			snprintf(path, sizeof(path), "%s/cpu%u.shard", dir, s);
			unlink(path);
		}
		snprintf(path, sizeof(path), "%s/meta.json", dir);
		unlink(path);
		rmdir(dir);
	}
	return ret;
}
