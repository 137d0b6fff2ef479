/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Attaching entry/return programs to many functions of a library file.
 * The only place that speaks the raw bpf() syscall for link types libbpf 1.1
 * does not know.
 */
#ifndef DLPROF_ATTACH_H
#define DLPROF_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <bpf/libbpf.h>

enum attach_mode {
	ATTACH_AUTO = 0,
	ATTACH_SESSION,		/* one uprobe-session link per library: one program for entry and return (kernel >= 6.13) */
	ATTACH_MULTI,		/* one multi-uprobe link per direction and library (kernel >= 6.6) */
	ATTACH_CLASSIC,		/* one perf-event uprobe per function and direction */
};

/* The programs of each mode; attach_prepare_progs() loads only the mode's. */
struct attach_progs {
	struct bpf_program *entry;	/* multi and classic */
	struct bpf_program *ret;	/* multi and classic */
	struct bpf_program *session;	/* session */
};

const char *attach_mode_name(enum attach_mode mode);
/* Returns the mode for a name ("auto", "session", "multi", "classic") or -EINVAL. */
int attach_mode_parse(const char *name);

/* The best mode this kernel supports: probed once by creating a doomed link. */
enum attach_mode attach_detect_mode(void);

/* 0 when this kernel can attach in mode (ATTACH_AUTO: always), else -EOPNOTSUPP. */
int attach_mode_supported(enum attach_mode mode);

/*
 * Must run between skeleton open and load: multi and session links need
 * their attach type at load, and the other mode's programs stay unloaded.
 */
int attach_prepare_progs(const struct attach_progs *progs, enum attach_mode mode);

/*
 * Classic mode holds a file descriptor per probe, two per function: makes
 * RLIMIT_NOFILE's soft limit room for probes more than the process's other
 * descriptors (up to the hard limit, and past it with CAP_SYS_RESOURCE).
 * 0, or -EMFILE when the limit stays short (-errno on other failures).
 */
int attach_fd_reserve(size_t probes);

/* The kernel's own "operation not supported" (not in userspace errno.h): an instruction a uprobe cannot take. */
#define DLPROF_ENOTSUPP 524

/* What an attach error means, for messages. */
const char *attach_strerror(int err);

/* A function that could not be probed and was left out. */
struct attach_skip {
	size_t index;		/* into the offsets passed to attacher__attach_file */
	int err;		/* -errno from the kernel */
};

/* One link: a multi or session link holds a run of functions, a classic one one probe. */
struct attach_link {
	int fd;
	bool ret;		/* classic: the return probe */
	uint64_t cookie;	/* classic: the probe's BPF cookie (its function id in the low bits); 0 for a run */
};

/*
 * Links in the order whose closing helps most while the kernel removes
 * classic probes one grace period at a time: those of the functions with
 * the most calls (calls[id], nr_calls entries; NULL: order kept) first, as
 * their breakpoints cost their callers until they go; a function's entry
 * before its return, so a call entered meanwhile still meets its return
 * probe; the unwinder's probes last, as return probes may need them.
 */
void attach_links_order(struct attach_link *links, size_t n, const uint64_t *calls, size_t nr_calls);

struct attacher;

/*
 * mode: the one the programs were prepared for (not ATTACH_AUTO: the mode
 * is chosen before load). pid > 0 limits the probes to that process (the
 * kernel then installs them in its memory only).
 */
struct attacher *attacher__new(enum attach_mode mode, const struct attach_progs *progs, pid_t pid);
/*
 * Called after each function a attaches or finds refused (one at a time in
 * classic mode, a whole run in the others), with their count since the tick
 * was set; true stops the attach, which then fails with -ECANCELED. NULL:
 * none.
 */
typedef bool (*attach_tick_fn)(void *ctx, size_t done);
void attacher__set_tick(struct attacher *a, attach_tick_fn tick, void *ctx);
/*
 * Attach entry and return probes at offsets[i] of the file at path, with
 * cookies[i] as the BPF cookie. A kernel that refuses some offsets (an
 * instruction it cannot probe fails a whole multi link) costs only those:
 * the set is split until the bad ones are isolated and reported in skips
 * (*nr_skips entries, caller frees *skips). Returns 0 when at least one
 * function is attached, else -errno of the first failure.
 */
int attacher__attach_file(struct attacher *a, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t cnt,
			  struct attach_skip **skips, size_t *nr_skips);
size_t attacher__nr_attached(const struct attacher *a);
/* The links a holds, in the order they were made; valid until a changes. */
const struct attach_link *attacher__links(const struct attacher *a, size_t *n);
/* Forgets a's links without closing them: whoever copied them closes them now. */
void attacher__forget_links(struct attacher *a);
enum attach_mode attacher__mode(const struct attacher *a);
/* Detaches everything; NULL-safe. */
void attacher__free(struct attacher *a);

#endif /* DLPROF_ATTACH_H */
