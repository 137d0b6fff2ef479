/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the running kernel offers, probed once (never read off its version):
 * the features dlprof-bpf cannot run without, and those it uses when present
 * with a fallback when not. docs/kernels.md lists them per kernel.
 */
#ifndef DLPROF_KERNEL_FEATURES_H
#define DLPROF_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum kernel_feature {
	KF_BTF,			/* required */
	KF_RINGBUF,		/* required */
	KF_TASK_STORAGE,	/* required */
	KF_ATTACH_COOKIE,	/* required */
	KF_UPROBE_MULTI,
	KF_UPROBE_SESSION,
	KF_WRITE_USER,
	KF_BPF_LOOP,
	KF_FILEMAP_TRACEPOINTS,
	KF_HW_PMU,
	KF_COUNT,
};

struct kernel_feature_info {
	const char *name;
	const char *since;	/* the mainline release that added it, if one did */
	const char *use;	/* what it serves, and what happens without it */
	bool required;
};

const struct kernel_feature_info *kernel_feature_info(enum kernel_feature f);

/* Whether the kernel has f; probed on first use, then remembered. */
bool kernel_has(enum kernel_feature f);

/*
 * 0 when every required feature is there, else -ENOTSUP with one line in
 * msg naming the first one missing and the kernel that has it.
 */
int kernel_features_check(char *msg, size_t msg_sz);

/*
 * The signature of the kernel's uprobe session kfuncs, read off its BTF: none
 * before 6.10, (void) until 7.0, (void *ctx) since (commit 8fe4dc4f6456);
 * OTHER for one this build does not know. The BPF object exists in one image
 * per known signature (bpf/profile.bpf.c says why).
 */
enum session_kfunc {
	SESSION_KFUNC_NONE,
	SESSION_KFUNC_VOID,
	SESSION_KFUNC_CTX,
	SESSION_KFUNC_OTHER,
};

/* Read once, then remembered. */
enum session_kfunc kernel_session_kfunc(void);

/* One line per feature: present or not, and what it serves. */
void kernel_features_print(FILE *out);

#endif /* DLPROF_KERNEL_FEATURES_H */
