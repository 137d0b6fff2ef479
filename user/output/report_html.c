// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "output/caller_nest.h"
#include "output/overhead_note.h"
#include "output/report_html.h"

/* A histogram cell's drawing area, in SVG user units. */
#define HIST_W 240
#define HIST_H 40
#define HIST_LABEL_H 11
/* The timeline: the thread names' column, the bins' area, one track's height. */
#define TL_LABEL_W 220
#define TL_W 960
#define TL_TRACK_H 14

static const char page_css[] =
	"body{font:13px/1.4 system-ui,sans-serif;margin:16px;color:#222}"
	"h1{font-size:18px;margin:0 0 4px}h2{font-size:15px;margin:18px 0 6px}h3{font-size:13px;margin:12px 0 4px}"
	".facts{color:#555}.facts span{margin-right:14px}"
	"table{border-collapse:collapse}th,td{padding:2px 8px;border-bottom:1px solid #e4e4e4;text-align:right;"
	"vertical-align:middle;white-space:nowrap}th{background:#f3f3f3;cursor:pointer;user-select:none;position:sticky;top:0}"
	"th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}"
	/*
	 * A name breaks only where <wbr> allows (after "::", ", " and "(") or
	 * as a last resort, which keeps the column's least width that of its
	 * longest piece, and shows six lines at most (the whole name in the title).
	 */
	"td.name,td.lib{text-align:left;white-space:normal;min-width:12em;max-width:560px;overflow-wrap:break-word}"
	"div.fn{display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:6;line-clamp:6;overflow:hidden}"
	"td.lib{color:#666;font-size:12px}svg text{font-size:9px;fill:#555}"
	"rect.bar{fill:#3b7dd8}rect.bin{fill:#d8563b}line.p50,line.p99{stroke-width:1;stroke-dasharray:2 2}"
	"line.p50{stroke:#2a9d4b}line.p99{stroke:#c0392b}.overhead-warning{color:#b03a2e;font-weight:600}"
	"tr.uncertain td{color:#a35a00}";

/*
 * Sorting: a header click sorts by its column (numbers largest first, names
 * A to Z; again: the other way). #sort=KEY[,asc|desc] in the address sorts on
 * load, which is how a page is linked (or tested) in a given order. The
 * body's data-sort says the order shown.
 */
static const char page_js[] =
	"(function(){var t=document.getElementById('funcs');if(!t)return;var b=t.tBodies[0],h=t.tHead.rows[0].cells;"
	"function sortBy(k,d){var c=-1;for(var i=0;i<h.length;i++){h[i].removeAttribute('aria-sort');"
	"if(h[i].dataset.key===k)c=i;}if(c<0)return;var num=h[c].dataset.type==='num';"
	"var r=Array.prototype.slice.call(b.rows);r.sort(function(x,y){var p=x.cells[c].dataset.v,q=y.cells[c].dataset.v;"
	"var o=num?parseFloat(p)-parseFloat(q):p.localeCompare(q);return d==='desc'?-o:o;});"
	"r.forEach(function(x){b.appendChild(x);});h[c].setAttribute('aria-sort',d==='desc'?'descending':'ascending');"
	"document.body.dataset.sort=k+','+d;}"
	"for(var i=0;i<h.length;i++)h[i].addEventListener('click',function(e){var k=e.currentTarget.dataset.key,"
	"cur=document.body.dataset.sort||'',d=e.currentTarget.dataset.type==='num'?'desc':'asc';"
	"if(cur===k+','+d)d=d==='desc'?'asc':'desc';sortBy(k,d);});"
	"var m=/sort=([\\w-]+)(?:,(asc|desc))?/.exec(location.hash);"
	"if(m)sortBy(m[1],m[2]||'desc');else document.body.dataset.sort='total,desc';})();";

void html_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* A fact in its own span: class names what it is for styles and tests. */
static void fact(FILE *out, const char *class, const char *text)
{
	fprintf(out, "<span class=\"%s\">", class);
	html_escape(out, text);
	fputs("</span>", out);
}

static void head(FILE *out, const struct report_info *info)
{
	char note[1024];

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>dlprof-bpf report</title><style>", out);
	fputs(page_css, out);
	fputs("</style></head>\n<body>\n<h1>dlprof-bpf report</h1>\n<p class=\"facts\">", out);
	fprintf(out, "<span>%zu function%s attached (", info->functions_attached,
		info->functions_attached == 1 ? "" : "s");
	html_escape(out, info->attach_mode ? info->attach_mode : "?");
	fprintf(out, ")</span><span>%.1f s profiled</span>", info->elapsed_s);
	if (info->functions_skipped)
		fprintf(out, "<span>%zu could not be probed</span>", info->functions_skipped);
	/* What is missing is said, never left for the reader to guess. */
	if (info->drops)
		fprintf(out, "<span class=\"loss\">%" PRIu64 " records lost</span>", info->drops);
	if (info->incomplete)
		fprintf(out, "<span class=\"loss\">%" PRIu64 " calls counted but not timed</span>", info->incomplete);
	if (info->in_flight)
		fprintf(out, "<span>%" PRIu64 " calls still running at the end (counted, not timed)</span>",
			info->in_flight);
	fputs("<span>counters: ", out);
	for (size_t k = 0; k < info->nr_events; k++) {
		fputs(k ? ", " : "", out);
		html_escape(out, info->events[k]);
	}
	fputs(info->nr_events ? "" : "none (on-CPU time only)", out);
	fputs("</span>", out);
	if (report_latency_note(note, sizeof(note), info))
		fact(out, "latency", note);
	/* What the probes cost the targets, where the trace says the probes' classes and costs. */
	if (overhead_note(note, sizeof(note), &info->overhead, info->probe_pair_ns, info->elapsed_s))
		fact(out, "overhead", note);
	if (overhead_warning(note, sizeof(note), &info->overhead, info->elapsed_s, &info->remedy))
		fact(out, "overhead-warning", note);
	fputs("</p>\n", out);
}

/* A number cell: data-v sorts, the text is for people; "-" where it is unknown (data-v -1). */
static void num_cell(FILE *out, const char *key, bool known, double v, const char *text)
{
	fprintf(out, "<td class=\"%s\" data-v=\"%.17g\">%s</td>", key, known ? v : -1, known ? text : "-");
}

static void ns_cell(FILE *out, const char *key, bool known, uint64_t ns)
{
	char buf[32];

	report_format_ns(buf, sizeof(buf), ns);
	num_cell(out, key, known, (double)ns, buf);
}

/* A per-call time: "<N" where it is within the calibration's spread; marks: "~" raw, "?" on an uncertain row. */
static void call_cell(FILE *out, const char *key, bool known, uint64_t ns, const struct latency_trust *t, bool raw)
{
	char buf[32], text[40];

	report_format_call_ns(buf, sizeof(buf), ns, t);
	/* The bound's "<" as HTML writes it. */
	snprintf(text, sizeof(text), "%s%s%s%s", buf[0] == '<' ? "&lt;" : "", buf + (buf[0] == '<'), raw ? "~" : "",
		 t->uncertain ? "?" : "");
	num_cell(out, key, known, (double)ns, text);
}

static void count_cell(FILE *out, const char *key, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	num_cell(out, key, true, (double)v, buf);
}

/* A percentile as a line through the middle of its bucket. */
static void mark(FILE *out, const char *what, uint32_t first, double w, uint64_t ns)
{
	double x = ((double)hist_bucket(ns) - first + 0.5) * w;
	char buf[32];

	report_format_ns(buf, sizeof(buf), ns);
	fprintf(out, "<line class=\"%s\" x1=\"%.2f\" x2=\"%.2f\" y1=\"0\" y2=\"%d\"><title>%s %s</title></line>",
		what, x, x, HIST_H, what, buf);
}

/* The timed calls' wall times, bucket by bucket (equal widths: the buckets are log-linear, so is the axis). */
static void hist_svg(FILE *out, const __u64 *hist, uint64_t p50_ns, uint64_t p99_ns)
{
	uint32_t first = HIST_BUCKETS, last = 0;
	uint64_t top = 0;
	char lo[32], hi[32];
	double w;

	for (uint32_t b = 0; hist && b < HIST_BUCKETS; b++) {
		if (!hist[b])
			continue;
		first = first < b ? first : b;
		last = b;
		top = top > hist[b] ? top : hist[b];
	}
	if (first > last) {
		fputs("-", out);
		return;
	}
	w = (double)HIST_W / (last - first + 1);
	fprintf(out, "<svg class=\"hist\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">", HIST_W,
		HIST_H + HIST_LABEL_H, HIST_W, HIST_H + HIST_LABEL_H);
	for (uint32_t b = first; b <= last; b++) {
		/* Heights on a log scale: one slow call in a million stays visible beside the mode. */
		double h = 1 + (HIST_H - 1) * log1p((double)hist[b]) / log1p((double)top);

		if (!hist[b])
			continue;
		report_format_ns(lo, sizeof(lo), hist_bucket_low(b));
		report_format_ns(hi, sizeof(hi), hist_bucket_low(b) + hist_bucket_width(b) - 1);
		fprintf(out, "<rect class=\"bar\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			"data-count=\"%" PRIu64 "\"><title>%s to %s: %" PRIu64 " calls</title></rect>",
			(b - first) * w, HIST_H - h, w > 1.5 ? w - 0.5 : w, h, (uint64_t)hist[b], lo, hi,
			(uint64_t)hist[b]);
	}
	mark(out, "p50", first, w, p50_ns);
	mark(out, "p99", first, w, p99_ns);
	report_format_ns(lo, sizeof(lo), hist_bucket_low(first));
	report_format_ns(hi, sizeof(hi), hist_bucket_low(last) + hist_bucket_width(last) - 1);
	fprintf(out, "<text x=\"0\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text></svg>",
		HIST_H + HIST_LABEL_H - 1, lo, HIST_W, HIST_H + HIST_LABEL_H - 1, hi);
}

/* A function's name, escaped, with a break allowed after each "::", ", " and "(". */
static void name_text(FILE *out, const char *name)
{
	for (const char *p = name; *p;) {
		size_t n = *p == ':' && p[1] == ':' ? 2 : *p == ',' && p[1] == ' ' ? 2 : 1;
		char piece[3] = { 0 };

		memcpy(piece, p, n);
		html_escape(out, piece);
		if (n == 2 || *p == '(')
			fputs("<wbr>", out);
		p += n;
	}
}

/* The columns' heads; name and lib say what the first two hold. */
static void column_heads(FILE *out, const struct report_info *info, const bool *shown, const char *name,
			 const char *lib)
{
	static const struct { const char *key, *type, *label; } cols[] = {
		{ "name", "text", NULL }, { "lib", "text", NULL }, { "calls", "num", "Calls" },
		{ "timed", "num", "Timed" }, { "total", "num", "Total" }, { "avg", "num", "Avg" },
		{ "p50", "num", "P50" }, { "p90", "num", "P90" }, { "p99", "num", "P99" }, { "max", "num", "Max" },
		{ "oncpu", "num", "On-CPU %" },
	};

	fputs("<thead><tr>", out);
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		fprintf(out, "<th data-key=\"%s\" data-type=\"%s\">%s</th>", cols[i].key, cols[i].type,
			i == 0 ? name : i == 1 ? lib : cols[i].label);
	for (size_t k = 0; k < info->nr_events; k++) {
		if (!shown[k])
			continue;
		fprintf(out, "<th data-key=\"ev%zu\" data-type=\"num\">", k);
		html_escape(out, info->events[k]);
		fputs(" / call</th>", out);
	}
	fputs("<th data-key=\"hist\" data-type=\"num\">Latency histogram</th></tr></thead>\n<tbody>\n", out);
}

static void table_head(FILE *out, const struct report_info *info, const bool *shown)
{
	fputs("<h2>Functions</h2>\n<p class=\"facts\">Times are wall time from entry to return; counters per timed "
	      "call. Histograms: one bar per non-empty log-linear bucket (16 per power of two), dashed lines at "
	      "P50 (green) and P99 (red). Click a header to sort.</p>\n<table id=\"funcs\">", out);
	column_heads(out, info, shown, "Function", "Library");
}

static void table_row(FILE *out, const struct report_row *r, const struct report_info *info, const bool *shown)
{
	const struct func_summary *s = &r->s;
	bool timed = s->returns > 0, raw = report_row_raw(r, info);
	struct latency_trust tr;
	char buf[32];

	report_trust(&tr, r, info);
	fputs(tr.uncertain ? "<tr class=\"uncertain\"><td class=\"name\" data-v=\"" : "<tr><td class=\"name\" data-v=\"", out);
	html_escape(out, r->func);
	fputs("\"", out);
	if (r->mangled && strcmp(r->mangled, r->func)) {
		fputs(" title=\"", out);
		html_escape(out, r->mangled);
		fputs("\"", out);
	}
	fputs("><div class=\"fn\" title=\"", out);
	html_escape(out, r->func);
	fputs("\">", out);
	name_text(out, r->func);
	fputs("</div></td><td class=\"lib\" data-v=\"", out);
	html_escape(out, r->lib);
	fputs("\" title=\"", out);
	html_escape(out, r->lib);
	fputs("\">", out);
	html_escape(out, strrchr(r->lib, '/') ? strrchr(r->lib, '/') + 1 : r->lib);
	fputs("</td>", out);
	count_cell(out, "calls", s->calls);
	if (r->entry_only != ENTRY_ONLY_NO && !s->returns)
		/* Why there is nothing to time: it has no return probe (docs/live-mode.md). */
		num_cell(out, "timed", true, 0, "entry only");
	else
		count_cell(out, "timed", s->returns);
	ns_cell(out, "total", timed, s->total_ns);
	call_cell(out, "avg", timed, s->avg_ns, &tr, raw);
	call_cell(out, "p50", timed, s->p50_ns, &tr, raw);
	call_cell(out, "p90", timed, s->p90_ns, &tr, raw);
	call_cell(out, "p99", timed, s->p99_ns, &tr, raw);
	call_cell(out, "max", timed, s->max_ns, &tr, raw);
	snprintf(buf, sizeof(buf), "%.1f%%", timed && s->total_ns ? 100.0 * (double)s->oncpu_ns / (double)s->total_ns : 0);
	num_cell(out, "oncpu", timed && s->total_ns, timed && s->total_ns ? 100.0 * (double)s->oncpu_ns / (double)s->total_ns : 0, buf);
	for (size_t k = 0; k < info->nr_events; k++) {
		double per = timed ? (double)s->counters[k] / (double)s->returns : 0;

		if (!shown[k])
			continue;
		report_format_count(buf, sizeof(buf), per);
		num_cell(out, "ev", timed, per, buf);
	}
	fprintf(out, "<td class=\"hist\" data-v=\"%" PRIu64 "\">", s->returns);
	hist_svg(out, r->hist, s->p50_ns, s->p99_ns);
	fputs("</td></tr>\n", out);
}

static void track_label(FILE *out, const struct timeline_track *tr)
{
	if (!tr->pid && !tr->tid) {
		fputs("other threads", out);
		return;
	}
	html_escape(out, tr->comm ? tr->comm : "?");
	fprintf(out, " %u/%u", tr->pid, tr->tid);
}

/* The bins up to the last call: the drawing spans the recording, not the bins' reserve. */
static size_t bins_used(const struct report_timeline *t)
{
	size_t used = t->end_ns > t->start_ns ? (size_t)((t->end_ns - t->start_ns) / t->bin_ns) + 1 : 1;

	return used < TIMELINE_BINS ? used : TIMELINE_BINS;
}

static void track_svg(FILE *out, const struct report_timeline *t, const struct timeline_track *tr, size_t row,
		      uint64_t top)
{
	double w = (double)(TL_W - TL_LABEL_W) / bins_used(t), y = (double)(row * TL_TRACK_H);

	fprintf(out, "<g class=\"track\" data-calls=\"%" PRIu64 "\"><text x=\"0\" y=\"%.0f\">", tr->calls, y + 10);
	track_label(out, tr);
	fputs("</text>", out);
	for (size_t i = 0; i < bins_used(t); i++) {
		if (!tr->bins[i])
			continue;
		fprintf(out, "<rect class=\"bin\" x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%d\" "
			"fill-opacity=\"%.2f\" data-count=\"%" PRIu64 "\"><title>%" PRIu64 " calls at %.3f s</title></rect>",
			TL_LABEL_W + i * w, y + 1, w, TL_TRACK_H - 2, 0.15 + 0.85 * (double)tr->bins[i] / (double)top,
			(uint64_t)tr->bins[i], (uint64_t)tr->bins[i], (double)(i * t->bin_ns) / 1e9);
	}
	fputs("</g>", out);
}

static uint64_t busiest_bin(const struct report_timeline *t)
{
	uint64_t top = 1;

	for (size_t i = 0; i < t->nr_tracks; i++)
		for (size_t b = 0; b < TIMELINE_BINS; b++)
			top = t->tracks[i].bins[b] > top ? t->tracks[i].bins[b] : top;
	for (size_t b = 0; b < TIMELINE_BINS; b++)
		top = t->other.bins[b] > top ? t->other.bins[b] : top;
	return top;
}

static void timeline(FILE *out, const struct report_timeline *t)
{
	size_t rows = t->nr_tracks + (t->other.calls ? 1 : 0);
	uint64_t top = busiest_bin(t);
	int h = (int)(rows + 1) * TL_TRACK_H;

	fprintf(out, "<h2>Timeline</h2>\n<p class=\"facts\">Calls per thread by entry time, %zu bins of %.3f ms "
		"from the recording's start (darker: more calls)</p>\n<svg id=\"timeline\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\">", bins_used(t), (double)t->bin_ns / 1e6, TL_W, h, TL_W, h);
	for (size_t i = 0; i < t->nr_tracks; i++)
		track_svg(out, t, &t->tracks[i], i, top);
	if (t->other.calls)
		track_svg(out, t, &t->other, t->nr_tracks, top);
	fprintf(out, "<text x=\"%d\" y=\"%zu\">0 s</text><text x=\"%d\" y=\"%zu\" text-anchor=\"end\">%.3f s</text>"
		"</svg>\n", TL_LABEL_W, rows * TL_TRACK_H + 10, TL_W, rows * TL_TRACK_H + 10,
		(double)(bins_used(t) * t->bin_ns) / 1e9);
}

/* Under the table, what its "<" bounds and "?" marks say, where it has them. */
static void trust_facts(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	int uncertain = 0, raw = 0;
	bool bounded = false;
	char note[512];

	for (size_t i = 0; i < n; i++) {
		struct latency_trust t;

		if (!rows[i].s.calls)
			continue;
		report_trust(&t, &rows[i], info);
		uncertain += t.uncertain;
		raw += report_row_raw(&rows[i], info);
		bounded |= rows[i].s.returns && latency_bounded(&t, rows[i].s.p50_ns);
	}
	if (!bounded && !uncertain && !raw)
		return;
	fputs("<p class=\"facts\">", out);
	if (report_raw_note(note, sizeof(note), raw))
		fact(out, "raw", note);
	if (bounded && report_bound_note(note, sizeof(note), info))
		fact(out, "bound", note);
	if (report_uncertain_note(note, sizeof(note), uncertain))
		fact(out, "uncertain", note);
	fputs("</p>\n", out);
}

/* The counters some called row has counted: the others' columns, all zero, are left out. */
static void counters_shown(const struct report_row *rows, size_t n, const struct report_info *info, bool *shown)
{
	for (size_t k = 0; k < info->nr_events; k++) {
		shown[k] = false;
		for (size_t i = 0; i < n && !shown[k]; i++)
			shown[k] = rows[i].s.calls && rows[i].s.counters[k];
	}
}

/* Under the table, the counters left out, so that no reader takes them for not counted. */
static void zero_counters(FILE *out, const struct report_info *info, const bool *shown)
{
	const char *sep = "<p class=\"facts\"><span class=\"zero-counters\">";

	for (size_t k = 0; k < info->nr_events; k++) {
		if (shown[k])
			continue;
		fputs(sep, out);
		html_escape(out, info->events[k]);
		sep = ", ";
	}
	if (sep[0] == ',')
		fputs(": 0 in every call (no column)</span></p>\n", out);
}

/*
 * --by caller: under the functions' table, each function's callers, most
 * time first, their module as the library (cn: every caller, no rest row).
 */
static void callers_section(FILE *out, const struct caller_nest *cn, const struct report_info *info,
			    const bool *shown)
{
	bool open = false;

	fputs("<h2>Callers</h2>\n<p class=\"facts\">Each function's calls split by the function that made them "
	      "(the one whose code holds the return address), in the file it is in; their rows add up to the "
	      "function's.</p>\n", out);
	for (size_t i = 0; i < cn->n; i++) {
		struct report_row r = cn->rows[i];

		if (!r.s.calls)
			continue;
		if (r.caller_level == 1) {
			if (open)
				fputs("</tbody></table>\n", out);
			fputs("<h3 class=\"callers-of\">", out);
			html_escape(out, r.func);
			fputs("</h3>\n<table class=\"callers\">", out);
			column_heads(out, info, shown, "Caller", "Module");
			open = true;
			continue;
		}
		r.func = r.group.caller ? r.group.caller : "-";
		r.lib = r.group.caller_module ? r.group.caller_module : "-";
		table_row(out, &r, info, shown);
	}
	if (open)
		fputs("</tbody></table>\n", out);
}

int report_html_summary(FILE *out, const struct report_row *rows, size_t n, const struct report_info *info)
{
	struct caller_nest cn = { 0 };
	bool shown[DLPROF_MAX_EVENTS], by_caller = info->by == ATTR_BY_CALLER;

	if (by_caller && caller_nest_build(rows, n, 0 /* every caller */, &cn))
		return -ENOMEM;
	head(out, info);
	counters_shown(rows, n, info, shown);
	table_head(out, info, shown);
	/* By caller, a function's row is the sum of its callers'. */
	for (size_t i = 0; i < (by_caller ? cn.n : n); i++) {
		const struct report_row *r = by_caller ? &cn.rows[i] : &rows[i];

		if (r->s.calls && r->caller_level < 2)
			table_row(out, r, info, shown);
	}
	fputs("</tbody></table>\n", out);
	zero_counters(out, info, shown);
	if (by_caller)
		callers_section(out, &cn, info, shown);
	caller_nest_free(&cn);
	trust_facts(out, rows, n, info);
	if (info->timeline)
		timeline(out, info->timeline);
	fputs("<script>", out);
	fputs(page_js, out);
	fputs("</script>\n</body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}
