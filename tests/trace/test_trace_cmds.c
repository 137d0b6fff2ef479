// SPDX-License-Identifier: GPL-2.0-only
/*
 * merge, report and dump as a user runs them: the built binary ($DLPROF)
 * on a generated trace. Outputs agree between a directory and its .dlt;
 * every failure is one "dlprof-bpf: <problem>; <what to do>" line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>
#include <json-c/json.h>

#include "trace/trace_meta.h"
#include "trace_testutil.h"

#define NR_CALLS 20000
#define NR_FUNCS 6

struct fixture {
	char *dir;		/* scratch */
	char trace[512];	/* the trace directory */
	char dlt[512];		/* its merge */
	struct call_record *recs;
	uint64_t calls[NR_FUNCS];
};

struct result {
	int status;		/* exit status, or 128 + signal */
	char *out;
	char *err;
};

static const char *dlprof;

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return strdup("");
	if (getdelim(&buf, &len, 0, f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

/* Runs dlprof-bpf ARGS... with stdout to out_path (NULL: a capture file) and a file size limit. */
static void run(struct fixture *f, struct result *r, const char *out_path, long fsize, ...)
{
	char outp[600], errp[600];
	const char *argv[16] = { dlprof };
	va_list ap;
	int n = 1;
	pid_t pid;

	va_start(ap, fsize);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	snprintf(outp, sizeof(outp), "%s/stdout", f->dir);
	snprintf(errp, sizeof(errp), "%s/stderr", f->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		int o = open(out_path ? out_path : outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fsize) {
			struct rlimit rl = { (rlim_t)fsize, (rlim_t)fsize };

			signal(SIGXFSZ, SIG_IGN);
			setrlimit(RLIMIT_FSIZE, &rl);
		}
		dup2(o, 1);
		dup2(e, 2);
		execv(dlprof, (char **)argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &r->status, 0), pid);
	r->status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : 128 + WTERMSIG(r->status);
	r->out = slurp(outp);
	r->err = slurp(errp);
}

static void result_free(struct result *r)
{
	free(r->out);
	free(r->err);
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* The user-facing error: exactly one line, "dlprof-bpf: <problem>; <what to do>". */
static void assert_one_error_line(const struct result *r, const char *needle)
{
	if (strncmp(r->err, "dlprof-bpf: ", 12) || count_lines(r->err) != 1 ||
	    !strstr(r->err, "; ") || !strstr(r->err, needle))
		fail_msg("unexpected stderr for '%s': %s", needle, r->err);
}

static int setup(void **state)
{
	struct gen_opts g = { .nr_cpus = 4, .nr_calls = NR_CALLS, .seed = 8, .max_gap_ns = 3000,
			      .max_dur_ns = 200000, .long_permille = 3, .long_dur_ns = 50000000,
			      .nr_funcs = NR_FUNCS, .nr_events = 2 };
	struct trace_writer_opts o = { .nr_cpus = 4, .reorder_window_ns = 1000000 };
	struct fixture *f = calloc(1, sizeof(*f));
	struct result r;

	dlprof = getenv("DLPROF");
	if (!dlprof) {
		fprintf(stderr, "DLPROF (the dlprof-bpf binary) is not set\n");
		return -1;
	}
	f->dir = make_tmpdir();
	snprintf(f->trace, sizeof(f->trace), "%s/trace.d", f->dir);
	snprintf(f->dlt, sizeof(f->dlt), "%s/trace.dlt", f->dir);
	f->recs = gen_calls(&g);
	if (feed_trace(f->trace, &o, f->recs, NR_CALLS, 50000000, NR_FUNCS, 2))
		return -1;
	for (size_t i = 0; i < NR_CALLS; i++)
		f->calls[f->recs[i].func_id]++;
	sort_records(f->recs, NR_CALLS);
	run(f, &r, NULL, 0, "merge", f->trace, "-o", f->dlt, NULL);
	if (r.status) {
		fprintf(stderr, "merge failed: %s", r.err);
		return -1;
	}
	result_free(&r);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	remove_tree(f->dir);
	free(f->dir);
	free(f->recs);
	free(f);
	return 0;
}

static void test_merge(void **state)
{
	struct fixture *f = *state;
	char out[600], want[64];
	struct result r;

	snprintf(out, sizeof(out), "%s/again.dlt", f->dir);
	run(f, &r, NULL, 0, "merge", f->trace, "-o", out, "--compress=none", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	snprintf(want, sizeof(want), ": %d records, ", NR_CALLS);
	assert_non_null(strstr(r.out, want));
	/* Uncompressed: a whole record per call and a little more. */
	assert_true(file_size(out) > NR_CALLS * TRACE_RECORD_SIZE);
	assert_true(file_size(f->dlt) < file_size(out) / 2);
	result_free(&r);
}

static void test_report_table(void **state)
{
	struct fixture *f = *state;
	struct result a, b;
	char name[16];

	run(f, &a, NULL, 0, "report", f->trace, NULL);
	assert_int_equal(a.status, 0);
	assert_string_equal(a.err, "");
	assert_non_null(strstr(a.out, "FUNCTION"));
	assert_non_null(strstr(a.out, "UNMATCHED"));
	for (int i = 0; i < NR_FUNCS; i++) {
		snprintf(name, sizeof(name), "func_%d ", i);
		assert_non_null(strstr(a.out, name));
	}
	/* A directory and its merge give the same report. */
	run(f, &b, NULL, 0, "report", f->dlt, NULL);
	assert_int_equal(b.status, 0);
	assert_string_equal(a.out, b.out);
	result_free(&a);
	result_free(&b);
}

static void test_report_json(void **state)
{
	struct fixture *f = *state;
	struct json_object *doc, *funcs, *v;
	struct result r;
	uint64_t total = 0;

	run(f, &r, NULL, 0, "report", f->dlt, "--json", NULL);
	assert_int_equal(r.status, 0);
	doc = json_tokener_parse(r.out);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "functions", &funcs));
	assert_int_equal(json_object_array_length(funcs), NR_FUNCS);
	for (size_t i = 0; i < NR_FUNCS; i++) {
		struct json_object *fn = json_object_array_get_idx(funcs, i), *name, *calls;
		int id;

		assert_true(json_object_object_get_ex(fn, "name", &name));
		assert_true(json_object_object_get_ex(fn, "calls", &calls));
		assert_int_equal(sscanf(json_object_get_string(name), "func_%d", &id), 1);
		assert_int_equal(json_object_get_uint64(calls), f->calls[id]);
		total += json_object_get_uint64(calls);
	}
	assert_int_equal(total, NR_CALLS);
	assert_true(json_object_object_get_ex(doc, "drops", &v));
	assert_int_equal(json_object_get_uint64(v), 0);
	json_object_put(doc);
	result_free(&r);
}

/* A trace's report as CSV: a row per function, each saying its times are raw (a trace's, as measured). */
static void test_report_csv(void **state)
{
	struct fixture *f = *state;
	char *line, *save;
	unsigned long long calls, total = 0;
	struct result r;
	size_t rows = 0;
	int id;

	run(f, &r, NULL, 0, "report", f->trace, "--format", "csv", NULL);
	assert_int_equal(r.status, 0);
	assert_string_equal(r.err, "");
	line = strtok_r(r.out, "\n", &save);
	assert_string_equal(line, "lib,func,calls,timed,unmatched,total_ns,avg_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns,"
				  "oncpu_ns,page-faults,context-switches,bound_ns,children_probe_share,latency");
	while ((line = strtok_r(NULL, "\n", &save))) {
		const char *kind = strrchr(line, ',');

		assert_int_equal(sscanf(line, "/usr/lib/libtest%*u.so.1,func_%d,%llu,", &id, &calls), 2);
		assert_int_equal(calls, f->calls[id]);
		assert_non_null(kind);
		assert_string_equal(kind, ",raw");
		total += calls;
		rows++;
	}
	assert_int_equal(rows, NR_FUNCS);
	assert_int_equal(total, NR_CALLS);
	result_free(&r);
}

static void test_dump_csv(void **state)
{
	struct fixture *f = *state;
	unsigned long long ts, dur, prev = 0;
	struct result a, b;
	char *line, *save;
	size_t rows = 0;

	run(f, &a, NULL, 0, "dump", f->trace, "--csv", NULL);
	assert_int_equal(a.status, 0);
	assert_string_equal(a.err, "");
	assert_int_equal(count_lines(a.out), NR_CALLS + 1);
	line = strtok_r(a.out, "\n", &save);
	assert_string_equal(line,
			    "ts_ns,dur_ns,pid,tid,cpu,lib,func,depth,page-faults,context-switches,oncpu_ns");
	/* The first row is the earliest call, field by field. */
	line = strtok_r(NULL, "\n", &save);
	{
		const struct call_record *c = &f->recs[0];
		char want[256];

		snprintf(want, sizeof(want), "%llu,%llu,%u,%u,%u,/usr/lib/libtest%u.so.1,func_%u,%u,%llu,%llu,%llu",
			 (unsigned long long)c->ts_ns, (unsigned long long)c->dur_ns, c->pid, c->tid,
			 c->cpu, c->func_id % 3, c->func_id, c->depth,
			 (unsigned long long)c->counters[0], (unsigned long long)c->counters[1],
			 (unsigned long long)c->oncpu_ns);
		assert_string_equal(line, want);
	}
	for (; line; line = strtok_r(NULL, "\n", &save)) {
		assert_int_equal(sscanf(line, "%llu,%llu,", &ts, &dur), 2);
		assert_true(ts >= prev);
		prev = ts;
		rows++;
	}
	assert_int_equal(rows, NR_CALLS);
	result_free(&a);
	run(f, &a, NULL, 0, "dump", f->trace, "--csv", NULL);
	run(f, &b, NULL, 0, "dump", f->dlt, "--csv", NULL);
	/* Same calls from the directory and the .dlt; equal timestamps may tie differently. */
	assert_int_equal(strlen(a.out), strlen(b.out));
	result_free(&a);
	result_free(&b);
}

static void test_dump_text(void **state)
{
	struct fixture *f = *state;
	struct result r;

	run(f, &r, NULL, 0, "dump", f->dlt, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.out), NR_CALLS + 1);
	assert_non_null(strstr(r.out, "[unmatched]"));
	assert_non_null(strstr(r.out, "page-faults="));
	assert_non_null(strstr(r.out, "(libtest"));
	result_free(&r);
}

static void test_errors(void **state)
{
	struct fixture *f = *state;
	char path[600], out[700], meta[700];
	struct result r;
	FILE *fp;

	run(f, &r, NULL, 0, "report", "/nonexistent/trace.d", NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "No such file");
	result_free(&r);

	snprintf(path, sizeof(path), "%s/empty.d", f->dir);
	mkdir(path, 0755);
	run(f, &r, NULL, 0, "dump", path, NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "not a trace directory");
	result_free(&r);

	snprintf(meta, sizeof(meta), "%s/meta.json", path);
	fp = fopen(meta, "w");
	fputs("{\"format_version\": 1, \"record_size\": 96", fp);
	fclose(fp);
	run(f, &r, NULL, 0, "report", path, NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "meta.json is corrupt");
	result_free(&r);

	run(f, &r, NULL, 0, "report", meta, NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "not a dlprof-bpf trace file");
	result_free(&r);

	/* A .dlt cut short: its header points past the end. */
	snprintf(path, sizeof(path), "%s/cut.dlt", f->dir);
	{
		size_t len = (size_t)file_size(f->dlt);
		char *buf = malloc(len);

		fp = fopen(f->dlt, "r");
		assert_int_equal(fread(buf, 1, len, fp), len);
		fclose(fp);
		fp = fopen(path, "w");
		fwrite(buf, 1, len / 2, fp);
		fclose(fp);
		free(buf);
	}
	run(f, &r, NULL, 0, "dump", path, "--csv", NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "cut short");
	result_free(&r);

	run(f, &r, NULL, 0, "merge", f->trace, "-o", "/nonexistent/x.dlt", NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "cannot create /nonexistent/x.dlt");
	result_free(&r);

	run(f, &r, NULL, 0, "merge", f->trace, NULL);
	assert_int_equal(r.status, 2);
	result_free(&r);
	snprintf(out, sizeof(out), "%s/x.dlt", f->dir);
	run(f, &r, NULL, 0, "merge", f->trace, "-o", out, "--compress=lz4", NULL);
	assert_int_equal(r.status, 2);
	assert_one_error_line(&r, "--compress");
	result_free(&r);

	/* A full disk, as a file size limit: one line, and no file left behind. */
	snprintf(out, sizeof(out), "%s/big.dlt", f->dir);
	run(f, &r, NULL, 30000, "merge", f->trace, "-o", out, NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "File too large");
	assert_int_equal(file_size(out), -1);
	result_free(&r);

	/* stdout that cannot take the output. */
	run(f, &r, "/dev/full", 0, "dump", f->dlt, "--csv", NULL);
	assert_int_equal(r.status, 1);
	assert_one_error_line(&r, "No space left on device");
	result_free(&r);
}

/* Drops in the metadata and a damaged block: the numbers still come, with one line saying so. */
static void test_incomplete(void **state)
{
	struct fixture *f = *state;
	struct trace_meta *m;
	char copy[600], cmd[1300], shard[700], err[256], out[700];
	struct json_object *doc, *v;
	struct result r;
	int dfd;
	FILE *fp;

	snprintf(copy, sizeof(copy), "%s/damaged.d", f->dir);
	snprintf(cmd, sizeof(cmd), "cp -r '%s' '%s'", f->trace, copy);
	assert_int_equal(system(cmd), 0);
	dfd = open(copy, O_RDONLY | O_DIRECTORY);
	assert_int_equal(trace_meta__load(&m, dfd, err, sizeof(err)), 0);
	m->cpus[2].ringbuf_drops = 17;
	assert_int_equal(trace_meta__write(m, dfd), 0);
	trace_meta__free(m);
	close(dfd);
	/* A byte in the first block's payload of cpu1. */
	snprintf(shard, sizeof(shard), "%s/cpu1.shard", copy);
	fp = fopen(shard, "r+");
	fseek(fp, 64 + 48 + 10, SEEK_SET);
	fputc(0x5a ^ fgetc(fp), fp);
	fseek(fp, 64 + 48 + 10, SEEK_SET);
	fclose(fp);

	run(f, &r, NULL, 0, "report", copy, "--json", NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "dlprof-bpf: incomplete trace: 17 records dropped"));
	assert_non_null(strstr(r.err, "1 damaged part skipped"));
	doc = json_tokener_parse(r.out);
	assert_true(json_object_object_get_ex(doc, "drops", &v));
	assert_int_equal(json_object_get_uint64(v), 17);
	json_object_put(doc);
	result_free(&r);

	/* merge lists the damage; the .dlt remembers it for later reports. */
	snprintf(out, sizeof(out), "%s/damaged.dlt", f->dir);
	run(f, &r, NULL, 0, "merge", copy, "-o", out, NULL);
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.err, "cpu1.shard: skipped"));
	assert_non_null(strstr(r.err, "incomplete trace"));
	result_free(&r);
	run(f, &r, NULL, 0, "report", out, NULL);
	assert_int_equal(r.status, 0);
	assert_int_equal(count_lines(r.err), 1);
	assert_non_null(strstr(r.err, "1 damaged part skipped"));
	assert_non_null(strstr(r.out, "17 records dropped"));
	result_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_report_table),
		cmocka_unit_test(test_report_json),
		cmocka_unit_test(test_report_csv),
		cmocka_unit_test(test_dump_csv),
		cmocka_unit_test(test_dump_text),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_incomplete),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
