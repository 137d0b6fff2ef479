// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "probe/attach.h"
#include "probe/events.h"
#include "probe/kernel_features.h"
#include "probe/unwind_hooks.h"

static bool has_btf(void)
{
	return access("/sys/kernel/btf/vmlinux", R_OK) == 0;
}

static bool has_ringbuf(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
}

static bool has_task_storage(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_TASK_STORAGE, NULL) == 1;
}

/* Classic uprobes carry the function id in the perf link's cookie. */
static bool has_attach_cookie(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie, NULL) == 1;
}

static bool has_uprobe_multi(void)
{
	return attach_mode_supported(ATTACH_MULTI) == 0;
}

static enum session_kfunc session_kfunc_of(const struct btf *btf)
{
	const struct btf_type *fn, *proto;
	const struct btf_param *p;
	__s32 id = btf__find_by_name_kind(btf, "bpf_session_is_return", BTF_KIND_FUNC);

	if (id <= 0)
		return SESSION_KFUNC_NONE;
	fn = btf__type_by_id(btf, (__u32)id);
	proto = fn ? btf__type_by_id(btf, fn->type) : NULL;
	if (!proto || !btf_is_func_proto(proto))
		return SESSION_KFUNC_OTHER;
	if (btf_vlen(proto) == 0)
		return SESSION_KFUNC_VOID;
	p = btf_params(proto);
	if (btf_vlen(proto) == 1 && btf_is_ptr(btf__type_by_id(btf, p->type)))
		return SESSION_KFUNC_CTX;
	return SESSION_KFUNC_OTHER;
}

enum session_kfunc kernel_session_kfunc(void)
{
	static int known = -1;
	struct btf *btf;

	if (known >= 0)
		return (enum session_kfunc)known;
	btf = btf__load_vmlinux_btf();
	if (!btf)
		return SESSION_KFUNC_NONE;
	known = session_kfunc_of(btf);
	btf__free(btf);
	return (enum session_kfunc)known;
}

/* Which of the BPF object's images is opened (probe/session.c), for --version -v. */
static const char *const session_kfunc_text[] = {
	[SESSION_KFUNC_NONE] = "none (the object's default image)",
	[SESSION_KFUNC_VOID] = "bpf_session_is_return(void) (the object's default image)",
	[SESSION_KFUNC_CTX] = "bpf_session_is_return(void *ctx), Linux 7.0+ (the object's ctx image)",
	[SESSION_KFUNC_OTHER] = "bpf_session_is_return of a signature this build does not know: "
				"the BPF object cannot load",
};

/* The session program also needs kfuncs of a signature one of our images declares. */
static bool has_uprobe_session(void)
{
	enum session_kfunc k = kernel_session_kfunc();

	return (k == SESSION_KFUNC_VOID || k == SESSION_KFUNC_CTX) &&
	       attach_mode_supported(ATTACH_SESSION) == 0;
}

static bool has_write_user(void)
{
	return unwind_fix_probe() == 0;
}

/* tp_btf programs attach to a tracepoint through its btf_trace_<name> typedef. */
static bool has_bpf_loop(void)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
}

static bool has_filemap_tracepoints(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool ok;

	if (!btf)
		return false;
	ok = btf__find_by_name_kind(btf, "btf_trace_mm_filemap_fault", BTF_KIND_TYPEDEF) > 0 &&
	     btf__find_by_name_kind(btf, "btf_trace_mm_filemap_map_pages", BTF_KIND_TYPEDEF) > 0;
	btf__free(btf);
	return ok;
}

static bool has_hw_pmu(void)
{
	const struct event_def *cycles = event_find("cycles");

	return cycles && event_probe(cycles) == 0;
}

static const struct {
	struct kernel_feature_info info;
	bool (*probe)(void);
} features[KF_COUNT] = {
	[KF_BTF] = { { "btf", "5.4", "kernel types for CO-RE and tp_btf programs", true }, has_btf },
	[KF_RINGBUF] = { { "ringbuf", "5.8", "the records of `record`", true }, has_ringbuf },
	[KF_TASK_STORAGE] = { { "task-storage", "5.11", "each thread's calls in flight", true }, has_task_storage },
	[KF_ATTACH_COOKIE] = { { "attach-cookie", "5.15", "the function id of each probe", true },
			       has_attach_cookie },
	[KF_UPROBE_MULTI] = { { "uprobe-multi", "6.6",
				"--attach multi: one link per library, fast attach and detach; "
				"else classic", false }, has_uprobe_multi },
	[KF_UPROBE_SESSION] = { { "uprobe-session", "6.13",
				  "--attach session: entry and return in one program; else multi",
				  false }, has_uprobe_session },
	[KF_WRITE_USER] = { { "write-user", NULL,
			      "the stack repair (--unwind): else what an unwinder "
			      "may cross is counted at entry only", false },
			    has_write_user },
	[KF_BPF_LOOP] = { { "bpf-loop", "5.17", "the stack repair's walk of pending returns", false }, has_bpf_loop },
	[KF_FILEMAP_TRACEPOINTS] = { { "filemap-tracepoints", NULL,
				       "copy discovery's hook on mappings of libraries", false },
				     has_filemap_tracepoints },
	[KF_HW_PMU] = { { "hardware-pmu", NULL, "cycles, instructions, cache events",
			  false }, has_hw_pmu },
};

const struct kernel_feature_info *kernel_feature_info(enum kernel_feature f)
{
	return f < KF_COUNT ? &features[f].info : NULL;
}

bool kernel_has(enum kernel_feature f)
{
	static signed char known[KF_COUNT];	/* 0 unknown, 1 present, -1 absent */

	if (f >= KF_COUNT)
		return false;
	if (!known[f])
		known[f] = features[f].probe() ? 1 : -1;
	return known[f] > 0;
}

int kernel_features_check(char *msg, size_t msg_sz)
{
	for (int f = 0; f < KF_COUNT; f++) {
		const struct kernel_feature_info *i = &features[f].info;

		if (!i->required || kernel_has(f))
			continue;
		snprintf(msg, msg_sz, "this kernel lacks %s (Linux %s+), needed for %s: "
			 "dlprof-bpf needs Linux 5.15 or later (docs/kernels.md)", i->name, i->since, i->use);
		return -ENOTSUP;
	}
	return 0;
}

void kernel_features_print(FILE *out)
{
	fprintf(out, "  %-20s %-4s %-6s %s\n", "FEATURE", "HAS", "SINCE", "USED FOR");
	for (int f = 0; f < KF_COUNT; f++) {
		const struct kernel_feature_info *i = &features[f].info;

		fprintf(out, "  %-20s %-4s %-6s %s%s\n", i->name, kernel_has(f) ? "yes" : "no",
			i->since ?: "-", i->required ? "(required) " : "", i->use);
	}
	fprintf(out, "  session kfuncs: %s\n", session_kfunc_text[kernel_session_kfunc()]);
}
