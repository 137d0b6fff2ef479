// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/probe_class.h"
#include "output/overhead_note.h"
#include "output/report.h"

static const char *const kind_names[PROBE_KINDS] = {
	[PROBE_KIND_EMULATED] = "emulated",
	[PROBE_KIND_STEPPED] = "single_stepped",
	[PROBE_KIND_ENTRY_ONLY] = "entry_only",
};

/*
 * The warning names a function past the costliest only when it costs at
 * least this share of the whole: a library's _init, called once, would
 * name nothing worth leaving out, and its single-stepped probe would
 * suggest --placement for nothing.
 */
#define WARNING_NAMES_SHARE 0.01

static bool said(const struct probe_overhead *o, double elapsed_s)
{
	return o->known && elapsed_s > 0;
}

/* A whole count up to a million, then 1.20M. */
static void format_calls(char *buf, size_t sz, uint64_t v)
{
	if (v < 1000000)
		snprintf(buf, sz, "%" PRIu64, v);
	else
		report_format_count(buf, sz, (double)v);
}

/* buf[*off...]: what fits; *off stays within sz. */
static void append(char *buf, size_t sz, size_t *off, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void append(char *buf, size_t sz, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= sz)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, sz - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off = *off + (size_t)n < sz ? *off + (size_t)n : sz - 1;
}

/*
 * "the probes cost the targets ~2.31s of CPU in 10.0 s profiled (23% of one CPU)";
 * recent: "... in the last 2.0 s (...)", a span that began after the start.
 */
static void headline(char *buf, size_t sz, size_t *off, const struct probe_overhead *o, double span_s,
		     bool recent)
{
	char cpu[24];

	double pct = 100.0 * o->cpu_s / span_s;

	report_format_ns(cpu, sizeof(cpu), (uint64_t)(o->cpu_s * 1e9));
	append(buf, sz, off, "the probes cost the targets %s%s of CPU in %s%.1f s%s (%.*f%% of one CPU",
	       o->bounded ? "at most " : "~", cpu, recent ? "the last " : "", span_s, recent ? "" : " profiled",
	       pct < 10 ? 1 : 0, pct);
	/* More than one CPU's worth is spread over several: said per CPU, as a share no CPU exceeds. */
	if (pct > 100 && o->nr_cpus > 1 && !o->nr_threads)
		append(buf, sz, off, ", %.0f%% of each of %u CPUs", pct / o->nr_cpus, o->nr_cpus);
	append(buf, sz, off, ")");
	/* Short: the warning's costliest functions follow, and top shows one screen line of it. */
	if (o->bounded && o->nr_threads)
		append(buf, sz, off, ", all the time its %u calling thread%s had", o->nr_threads,
		       o->nr_threads == 1 ? "" : "s");
	else if (o->bounded)
		append(buf, sz, off, ", all the time the CPUs had");
}

bool overhead_note(char *buf, size_t sz, const struct probe_overhead *o,
		   const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double elapsed_s)
{
	/* Entry-only calls by their entry's class: each class has its own cost. */
	enum { EMULATED, STEPPED, ENTRY_EMULATED, ENTRY_STEPPED, NR_LINES };
	static const char *const at[NR_LINES] = {
		[EMULATED] = "calls at an emulated pair's",
		[STEPPED] = "calls at a single-stepped pair's",
		[ENTRY_EMULATED] = "entry-only calls at an emulated entry probe's",
		[ENTRY_STEPPED] = "entry-only calls at a single-stepped entry probe's",
	};
	uint64_t calls_of[NR_LINES] = {
		[EMULATED] = o->calls[PROBE_KIND_EMULATED],
		[STEPPED] = o->calls[PROBE_KIND_STEPPED],
		[ENTRY_EMULATED] = o->calls[PROBE_KIND_ENTRY_ONLY] - o->entry_only_stepped,
		[ENTRY_STEPPED] = o->entry_only_stepped,
	};
	const char *sep = ": ";
	size_t off = 0;

	if (!sz || !said(o, elapsed_s))
		return false;
	buf[0] = '\0';
	headline(buf, sz, &off, o, elapsed_s, false);
	for (int k = 0; k < NR_LINES; k++) {
		bool stepped = k == STEPPED || k == ENTRY_STEPPED;
		char calls[24], cost[24];

		if (!calls_of[k])
			continue;
		format_calls(calls, sizeof(calls), calls_of[k]);
		report_format_ns(cost, sizeof(cost), probe_call_cost_ns(pair_ns, stepped, k >= ENTRY_EMULATED ?
									ENTRY_ONLY_RETURN_ADDRESS : ENTRY_ONLY_NO));
		append(buf, sz, &off, "%s%s %s %s", sep, calls, at[k], cost);
		sep = ", ";
	}
	return true;
}

bool overhead_warning(char *buf, size_t sz, const struct probe_overhead *o, double elapsed_s,
		      const struct overhead_remedy *r)
{
	return overhead_warning_span(buf, sz, o, elapsed_s, false, r);
}

bool overhead_warning_span(char *buf, size_t sz, const struct probe_overhead *o, double span_s, bool recent,
			   const struct overhead_remedy *r)
{
	bool stepped = false;
	size_t off = 0;

	if (!sz || !said(o, span_s) || !probe_overhead_past_share(o, span_s))
		return false;
	buf[0] = '\0';
	headline(buf, sz, &off, o, span_s, recent);
	for (int i = 0; i < PROBE_OVERHEAD_TOP && o->top[i].f; i++) {
		const struct func_profile *f = o->top[i].f;
		char cpu[24];

		/* Costliest first: past the first, one that costs next to nothing is no remedy's target. */
		if (i && o->top[i].cpu_s < WARNING_NAMES_SHARE * o->cpu_s)
			break;
		stepped |= f->stepped;
		report_format_ns(cpu, sizeof(cpu), (uint64_t)(o->top[i].cpu_s * 1e9));
		append(buf, sz, &off, "%s%s ~%s (%s)", i ? ", " : ", most in ", f->func, cpu,
		       f->entry_only != ENTRY_ONLY_NO ? "entry-only" : f->stepped ? "single-stepped" : "emulated");
	}
	append(buf, sz, &off, "; probe fewer functions with --func/--exclude");
	if (stepped && r->placement_entry)
		append(buf, sz, &off, ", let --placement auto move probes off single-stepped entries");
	append(buf, sz, &off, "; 'dlprof-bpf list --lib %s' shows each function's probe class",
	       r->lib ? r->lib : "LIB");
	return true;
}

static int add_u64(struct json_object *o, const char *key, uint64_t v)
{
	struct json_object *n = json_object_new_uint64(v);

	return n ? json_object_object_add(o, key, n) : -ENOMEM;
}

static int add_obj(struct json_object *parent, const char *key, struct json_object **out)
{
	*out = json_object_new_object();
	return *out ? json_object_object_add(parent, key, *out) : -ENOMEM;
}

static int add_top(struct json_object *ov, const struct probe_overhead *o)
{
	struct json_object *arr = json_object_new_array();
	int err;

	if (!arr)
		return -ENOMEM;
	err = json_object_object_add(ov, "costliest", arr);
	for (int i = 0; i < PROBE_OVERHEAD_TOP && o->top[i].f && !err; i++) {
		const struct func_profile *f = o->top[i].f;
		struct json_object *e = json_object_new_object();

		if (!e)
			return -ENOMEM;
		err = json_object_array_add(arr, e);
		err |= json_object_object_add(e, "name", json_object_new_string(f->func));
		err |= json_object_object_add(e, "lib", json_object_new_string(f->lib));
		err |= json_object_object_add(e, "probes", json_object_new_string(
			kind_names[probe_kind_of(f->stepped, f->entry_only)]));
		err |= json_object_object_add(e, "cpu_s", json_object_new_double(o->top[i].cpu_s));
	}
	return err;
}

int overhead_json(struct json_object *doc, const struct probe_overhead *o,
		  const uint64_t pair_ns[DLPROF_PROBE_CLASSES], double elapsed_s)
{
	struct json_object *ov, *calls, *pairs;
	int err;

	if (!said(o, elapsed_s))
		return 0;
	err = add_obj(doc, "probe_overhead", &ov);
	if (!err)
		err = add_obj(ov, "calls", &calls);
	if (!err)
		err = add_obj(ov, "pair_ns", &pairs);
	if (err)
		return -ENOMEM;
	err |= json_object_object_add(ov, "cpu_s", json_object_new_double(o->cpu_s));
	err |= json_object_object_add(ov, "share_of_one_cpu", json_object_new_double(o->cpu_s / elapsed_s));
	/* cpu_s is the calling threads' or the CPUs' whole time over the span: the estimate was more. */
	err |= json_object_object_add(ov, "bounded", json_object_new_boolean(o->bounded));
	for (int k = 0; k < PROBE_KINDS; k++)
		err |= add_u64(calls, kind_names[k], o->calls[k]);
	for (int k = 0; k < DLPROF_PROBE_CLASSES; k++)
		err |= add_u64(pairs, probe_class_name((enum dlprof_probe_class)k), pair_ns[k]);
	err |= add_top(ov, o);
	return err ? -ENOMEM : 0;
}
