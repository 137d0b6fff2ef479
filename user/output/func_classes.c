// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "model/probe_class.h"
#include "model/probe_overhead.h"
#include "output/func_classes.h"
#include "output/report.h"
#include "util/path.h"

static const struct {
	const char *text;	/* the table's */
	const char *key;	/* JSON's */
} class_names[FUNC_CLASSES] = {
	[FUNC_CLASS_EMULATED] = { "emulated", "emulated" },
	[FUNC_CLASS_STEPPED] = { "single-stepped", "single_stepped" },
	[FUNC_CLASS_ENTRY_ONLY] = { "entry-only", "entry_only" },
	[FUNC_CLASS_UNPROBEABLE] = { "not probeable", "not_probeable" },
};

static const char *const unprobeable_whys[] = {
	[UNPROBEABLE_NO] = "",
	[UNPROBEABLE_NO_PLACE] = "no instruction near its entry can take a uprobe",
	[UNPROBEABLE_IFUNC] = "an IFUNC whose implementation was not found inside the library",
};

static const char *const unprobeable_keys[] = {
	[UNPROBEABLE_NO] = "",
	[UNPROBEABLE_NO_PLACE] = "no-probeable-instruction",
	[UNPROBEABLE_IFUNC] = "ifunc-unresolved",
};

static const char *const entry_only_whys[] = {
	[ENTRY_ONLY_NO] = "",
	[ENTRY_ONLY_RETURN_ADDRESS] = "keeps its return address, which a return probe would break",
	[ENTRY_ONLY_UNWINDING] = "unwinding may cross it and nothing repairs the stack (--unwind unsafe times it)",
};

enum func_class class_of(const struct class_row *r)
{
	if (r->unprobeable != UNPROBEABLE_NO)
		return FUNC_CLASS_UNPROBEABLE;
	if (r->entry_only != ENTRY_ONLY_NO)
		return FUNC_CLASS_ENTRY_ONLY;
	return r->stepped ? FUNC_CLASS_STEPPED : FUNC_CLASS_EMULATED;
}

static int row_cmp(const void *a, const void *b)
{
	const struct class_row *x = a, *y = b;
	int c = strcmp(x->lib, y->lib);

	return c ? c : strcmp(x->func, y->func);
}

void class_rows_sort(struct class_row *rows, size_t n)
{
	qsort(rows, n, sizeof(*rows), row_cmp);
}

/* "at the entry" or "moved 4 bytes past the entry" */
static void where(char *buf, size_t sz, uint32_t moved)
{
	if (moved)
		snprintf(buf, sz, "moved %u byte%s past the entry", moved, moved == 1 ? "" : "s");
	else
		snprintf(buf, sz, "at the entry");
}

void class_detail(char *buf, size_t sz, const struct class_row *r)
{
	char at[48];

	where(at, sizeof(at), r->moved);
	switch (class_of(r)) {
	case FUNC_CLASS_EMULATED:
	case FUNC_CLASS_STEPPED:
		snprintf(buf, sz, "%s", at);
		break;
	case FUNC_CLASS_ENTRY_ONLY:
		snprintf(buf, sz, "%s; entry probe %s, %s", entry_only_whys[r->entry_only],
			 r->stepped ? "single-stepped" : "emulated", at);
		break;
	default:
		snprintf(buf, sz, "%s", unprobeable_whys[r->unprobeable]);
	}
}

struct class_counts {
	size_t n[FUNC_CLASSES];
	size_t moved[FUNC_CLASSES];
};

static struct class_counts count(const struct class_row *rows, size_t n)
{
	struct class_counts c = { 0 };

	for (size_t i = 0; i < n; i++) {
		enum func_class k = class_of(&rows[i]);

		c.n[k]++;
		c.moved[k] += rows[i].moved != 0;
	}
	return c;
}

void class_counts_line(char *buf, size_t sz, const struct class_row *rows, size_t n)
{
	struct class_counts c = count(rows, n);
	size_t off;
	int w;

	w = snprintf(buf, sz, "%zu function%s", n, n == 1 ? "" : "s");
	off = w > 0 ? (size_t)w : 0;
	for (int k = 0; k < FUNC_CLASSES && off < sz; k++) {
		char moved[48] = "";

		if (c.moved[k])
			snprintf(moved, sizeof(moved), " (%zu moved past the entry)", c.moved[k]);
		w = snprintf(buf + off, sz - off, "%s%zu %s%s", k ? ", " : ": ", c.n[k], class_names[k].text, moved);
		off += w > 0 ? (size_t)w : 0;
	}
}

void class_costs_line(char *buf, size_t sz, const struct class_costs *c, bool entry_only)
{
	char e[24], s[24], el[24], sl[24], ee[24], se[24];
	int w;

	if (!c->measured) {
		snprintf(buf, sz, "probe costs not measured: %s", c->why_not ? c->why_not : "unknown");
		return;
	}
	report_format_ns(e, sizeof(e), c->pair_ns[DLPROF_PROBE_EMULATED]);
	report_format_ns(s, sizeof(s), c->pair_ns[DLPROF_PROBE_STEPPED]);
	report_format_ns(el, sizeof(el), c->pair_least_ns[DLPROF_PROBE_EMULATED]);
	report_format_ns(sl, sizeof(sl), c->pair_least_ns[DLPROF_PROBE_STEPPED]);
	w = snprintf(buf, sz, "a probe pair costs a call %s emulated, %s single-stepped (medians; least %s, %s), "
		     "timed now with a profile's programs (%s)", e, s, el, sl, c->attach_mode);
	if (!entry_only || w < 0 || (size_t)w >= sz)
		return;
	report_format_ns(ee, sizeof(ee), probe_call_cost_ns(c->pair_ns, false, ENTRY_ONLY_RETURN_ADDRESS));
	report_format_ns(se, sizeof(se), probe_call_cost_ns(c->pair_ns, true, ENTRY_ONLY_RETURN_ADDRESS));
	snprintf(buf + w, sz - (size_t)w, "; an entry probe alone ~%s emulated, ~%s single-stepped", ee, se);
}

void class_list_print(FILE *out, const struct class_row *rows, size_t n, const struct class_costs *c)
{
	int fw = 8, lw = 7;
	bool entry_only = false;
	char line[1024];

	for (size_t i = 0; i < n; i++) {
		if ((int)strlen(rows[i].func) > fw)
			fw = (int)strlen(rows[i].func);
		if ((int)strlen(path_base(rows[i].lib)) > lw)
			lw = (int)strlen(path_base(rows[i].lib));
		entry_only |= class_of(&rows[i]) == FUNC_CLASS_ENTRY_ONLY;
	}
	fprintf(out, "%-*s %-*s %-14s %s\n", fw, "FUNCTION", lw, "LIBRARY", "CLASS", "WHERE, WHY");
	for (size_t i = 0; i < n; i++) {
		class_detail(line, sizeof(line), &rows[i]);
		fprintf(out, "%-*s %-*s %-14s %s\n", fw, rows[i].func, lw, path_base(rows[i].lib),
			class_names[class_of(&rows[i])].text, line);
	}
	class_counts_line(line, sizeof(line), rows, n);
	fprintf(out, "# %s\n", line);
	class_costs_line(line, sizeof(line), c, entry_only);
	fprintf(out, "# %s\n", line);
}

static int add_u64(struct json_object *o, const char *key, uint64_t v)
{
	struct json_object *n = json_object_new_uint64(v);

	return n ? json_object_object_add(o, key, n) : -ENOMEM;
}

static int add_str(struct json_object *o, const char *key, const char *v)
{
	struct json_object *s = json_object_new_string(v);

	return s ? json_object_object_add(o, key, s) : -ENOMEM;
}

static struct json_object *row_json(const struct class_row *r)
{
	struct json_object *o = json_object_new_object();
	enum func_class k = class_of(r);
	int err = 0;

	if (!o)
		return NULL;
	err |= add_str(o, "lib", r->lib);
	err |= add_str(o, "name", r->func);
	if (r->mangled && strcmp(r->mangled, r->func))
		err |= add_str(o, "mangled", r->mangled);
	err |= add_str(o, "class", class_names[k].key);
	if (k == FUNC_CLASS_UNPROBEABLE) {
		err |= add_str(o, "reason", unprobeable_keys[r->unprobeable]);
	} else {
		err |= add_str(o, "entry_probe", probe_class_name(r->stepped ? DLPROF_PROBE_STEPPED :
								 DLPROF_PROBE_EMULATED));
		err |= add_u64(o, "moved_bytes", r->moved);
	}
	if (k == FUNC_CLASS_ENTRY_ONLY)
		err |= add_str(o, "entry_only_reason", report_entry_only_reason(r->entry_only));
	if (err) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static int add_counts(struct json_object *doc, const struct class_row *rows, size_t n)
{
	struct json_object *o = json_object_new_object();
	struct class_counts c = count(rows, n);
	size_t moved = 0;
	int err;

	if (!o)
		return -ENOMEM;
	err = json_object_object_add(doc, "counts", o);
	for (int k = 0; k < FUNC_CLASSES; k++) {
		err |= add_u64(o, class_names[k].key, c.n[k]);
		moved += c.moved[k];
	}
	err |= add_u64(o, "moved", moved);
	return err;
}

static int add_costs(struct json_object *doc, const struct class_costs *c)
{
	struct json_object *costs;
	int err;

	if (!c->measured)
		return add_str(doc, "probe_cost_error", c->why_not ? c->why_not : "unknown");
	costs = json_object_new_object();
	if (!costs)
		return -ENOMEM;
	err = json_object_object_add(doc, "probe_cost_ns", costs);
	err |= add_str(doc, "attach_mode", c->attach_mode);
	for (int k = 0; k < DLPROF_PROBE_CLASSES && !err; k++) {
		struct json_object *o = json_object_new_object();

		if (!o)
			return -ENOMEM;
		err |= json_object_object_add(costs, probe_class_name((enum dlprof_probe_class)k), o);
		err |= add_u64(o, "pair", c->pair_ns[k]);
		err |= add_u64(o, "pair_least", c->pair_least_ns[k]);
		err |= add_u64(o, "entry", probe_call_cost_ns(c->pair_ns, k == DLPROF_PROBE_STEPPED,
							       ENTRY_ONLY_RETURN_ADDRESS));
	}
	return err;
}

int class_list_print_json(FILE *out, const struct class_row *rows, size_t n, const struct class_costs *c)
{
	struct json_object *doc = json_object_new_object(), *funcs = json_object_new_array();
	int err = 0;

	if (!doc || !funcs) {
		json_object_put(doc);
		json_object_put(funcs);
		return -ENOMEM;
	}
	err |= json_object_object_add(doc, "functions", funcs);
	for (size_t i = 0; i < n && !err; i++) {
		struct json_object *r = row_json(&rows[i]);

		err |= r ? json_object_array_add(funcs, r) : -ENOMEM;
	}
	err |= add_counts(doc, rows, n);
	err |= add_costs(doc, c);
	if (!err) {
		fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), out);
		fputc('\n', out);
	}
	json_object_put(doc);
	return err ? -ENOMEM : 0;
}
