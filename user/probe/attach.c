// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>

#include "probe/attach.h"
#include "util/array.h"
#include "dlprof.h"

/*
 * Multi-uprobe links came with kernel 6.6 (commit 89ae89f53d20 "bpf: Add
 * multi uprobe link"), uprobe sessions with 6.13 (commit d920179b3d48
 * "bpf: Add support for uprobe multi session attach"); Debian 12's uapi
 * headers and libbpf 1.1 predate both, so the numbers and the attr layout
 * are spelled out here.
 */
#define DLPROF_BPF_TRACE_UPROBE_MULTI	48
#define DLPROF_BPF_TRACE_UPROBE_SESSION	57
#define DLPROF_BPF_F_UPROBE_MULTI_RETURN 1u

/* union bpf_attr's link_create for uprobe_multi, byte for byte. */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 uprobe_flags;
	__u32 pid;
};

/*
 * The uprobe PMU (kernel 4.17, commit 33ea4b24277b "perf/core: Implement
 * the 'perf_uprobe' PMU"): its perf type and the config bit that makes a
 * return probe, as sysfs names them.
 */
struct uprobe_pmu {
	int type;		/* 0: not read yet */
	int ret_bit;
};

struct attacher {
	enum attach_mode mode;
	struct attach_progs progs;
	pid_t pid;
	struct uprobe_pmu pmu;		/* classic */
	struct attach_link *links;
	size_t nr_links, cap_links;
	size_t nr_attached;
	size_t nr_done;			/* functions attached or refused, for the tick */
	attach_tick_fn tick;
	void *tick_ctx;
};

static const char *const mode_names[] = {
	[ATTACH_AUTO] = "auto",
	[ATTACH_SESSION] = "session",
	[ATTACH_MULTI] = "multi",
	[ATTACH_CLASSIC] = "classic",
};

const char *attach_strerror(int err)
{
	if (err == -DLPROF_ENOTSUPP)
		return "the kernel cannot put a uprobe on this instruction";
	if (err == -EMFILE)
		return "out of file descriptors: classic mode takes one per probe (raise the limit with ulimit -n)";
	return strerror(-err);
}

const char *attach_mode_name(enum attach_mode mode)
{
	if ((size_t)mode >= sizeof(mode_names) / sizeof(mode_names[0]))
		return "?";
	return mode_names[mode];
}

int attach_mode_parse(const char *name)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (!strcmp(name, mode_names[i]))
			return (int)i;
	return -EINVAL;
}

static int sys_link_create_uprobe_multi(int prog_fd, __u32 attach_type, const char *path,
					const uint64_t *offsets, const uint64_t *cookies, __u32 cnt,
					__u32 flags, pid_t pid)
{
	union bpf_attr attr;
	struct link_create_uprobe_multi lc = {
		.prog_fd = prog_fd,
		.attach_type = attach_type,
		.path = (__u64)(unsigned long)path,
		.offsets = (__u64)(unsigned long)offsets,
		.cookies = (__u64)(unsigned long)cookies,
		.cnt = cnt,
		.uprobe_flags = flags,
		.pid = pid > 0 ? (__u32)pid : 0,
	};
	int fd;

	_Static_assert(sizeof(lc) <= sizeof(attr), "uprobe_multi attr larger than bpf_attr");
	memset(&attr, 0, sizeof(attr));
	memcpy(&attr, &lc, sizeof(lc));
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

/*
 * Whether the kernel knows a link attach type: it rejects "/" for not being
 * a regular file (-EBADF) before attaching anything, while a kernel without
 * the type rejects the type itself (-EINVAL).
 */
static bool link_type_supported(__u32 attach_type)
{
	static const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = attach_type);
	uint64_t offset = 0;
	int prog_fd, err;

	prog_fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "dlprof_probe", "GPL", insns,
				sizeof(insns) / sizeof(insns[0]), &opts);
	if (prog_fd < 0)
		return false;
	err = sys_link_create_uprobe_multi(prog_fd, attach_type, "/", &offset, NULL, 1, 0, 0);
	if (err >= 0)
		close(err);
	close(prog_fd);
	return err == -EBADF;
}

int attach_mode_supported(enum attach_mode mode)
{
	switch (mode) {
	case ATTACH_SESSION:
		return link_type_supported(DLPROF_BPF_TRACE_UPROBE_SESSION) ? 0 : -EOPNOTSUPP;
	case ATTACH_MULTI:
		return link_type_supported(DLPROF_BPF_TRACE_UPROBE_MULTI) ? 0 : -EOPNOTSUPP;
	default:
		return 0;
	}
}

enum attach_mode attach_detect_mode(void)
{
	if (!attach_mode_supported(ATTACH_SESSION))
		return ATTACH_SESSION;
	if (!attach_mode_supported(ATTACH_MULTI))
		return ATTACH_MULTI;
	return ATTACH_CLASSIC;
}

int attach_prepare_progs(const struct attach_progs *progs, enum attach_mode mode)
{
	bool session = mode == ATTACH_SESSION;
	int err;

	err = bpf_program__set_autoload(progs->session, session);
	err = err ?: bpf_program__set_autoload(progs->entry, !session);
	err = err ?: bpf_program__set_autoload(progs->ret, !session);
	if (session)
		err = err ?: bpf_program__set_expected_attach_type(progs->session,
								    DLPROF_BPF_TRACE_UPROBE_SESSION);
	if (mode == ATTACH_MULTI) {
		err = err ?: bpf_program__set_expected_attach_type(progs->entry, DLPROF_BPF_TRACE_UPROBE_MULTI);
		err = err ?: bpf_program__set_expected_attach_type(progs->ret, DLPROF_BPF_TRACE_UPROBE_MULTI);
	}
	return err;
}

struct attacher *attacher__new(enum attach_mode mode, const struct attach_progs *progs, pid_t pid)
{
	struct attacher *a;

	if (mode == ATTACH_AUTO) {
		errno = EINVAL;
		return NULL;
	}
	a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	a->mode = mode;
	a->progs = *progs;
	a->pid = pid;
	return a;
}

/* Room for n more links: 0 or -ENOMEM. */
static int reserve_links(struct attacher *a, size_t n)
{
	return ARRAY_RESERVE(a->links, a->cap_links, a->nr_links + n);
}

static void push_link(struct attacher *a, int fd, bool ret, uint64_t cookie)
{
	a->links[a->nr_links++] = (struct attach_link){ .fd = fd, .ret = ret, .cookie = cookie };
}

/* One session link for a run of offsets. */
static int attach_session_range(struct attacher *a, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, size_t cnt)
{
	int fd, err;

	fd = sys_link_create_uprobe_multi(bpf_program__fd(a->progs.session), DLPROF_BPF_TRACE_UPROBE_SESSION,
					  path, offsets, cookies, (__u32)cnt, 0, a->pid);
	if (fd < 0)
		return fd;
	err = reserve_links(a, 1);
	if (err) {
		close(fd);
		return err;
	}
	push_link(a, fd, false, 0);
	return 0;
}

static bool wants_return(uint64_t cookie)
{
	return !(cookie & DLPROF_COOKIE_ENTRY_ONLY);
}

/*
 * The return link of a run: the offsets whose cookie wants a return probe.
 * Returns its fd, -errno, or 0 when none does.
 */
static int attach_multi_returns(struct attacher *a, const char *path, const uint64_t *offsets,
				const uint64_t *cookies, size_t cnt)
{
	uint64_t *ro = malloc(cnt * sizeof(*ro)), *rc = malloc(cnt * sizeof(*rc));
	size_t n = 0;
	int fd;

	if (!ro || !rc) {
		fd = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < cnt; i++) {
		if (!wants_return(cookies[i]))
			continue;
		ro[n] = offsets[i];
		rc[n++] = cookies[i];
	}
	fd = n ? sys_link_create_uprobe_multi(bpf_program__fd(a->progs.ret), DLPROF_BPF_TRACE_UPROBE_MULTI,
					      path, ro, rc, (__u32)n, DLPROF_BPF_F_UPROBE_MULTI_RETURN, a->pid)
	       : 0;
cleanup:
	free(ro);
	free(rc);
	return fd;
}

/* Entry and return links for one run of offsets: both or neither. */
static int attach_multi_range(struct attacher *a, const char *path, const uint64_t *offsets,
			      const uint64_t *cookies, size_t cnt)
{
	int efd, rfd, err;

	efd = sys_link_create_uprobe_multi(bpf_program__fd(a->progs.entry), DLPROF_BPF_TRACE_UPROBE_MULTI,
					   path, offsets, cookies, (__u32)cnt, 0, a->pid);
	if (efd < 0)
		return efd;
	rfd = attach_multi_returns(a, path, offsets, cookies, cnt);
	if (rfd < 0) {
		close(efd);
		return rfd;
	}
	err = reserve_links(a, 2);
	if (err) {
		if (rfd)
			close(rfd);
		close(efd);
		return err;
	}
	push_link(a, efd, false, 0);
	if (rfd)
		push_link(a, rfd, true, 0);
	return 0;
}

/* A sysfs file's first line, NUL-terminated without its newline: 0 or -errno. */
static int read_line(const char *path, char *buf, size_t sz)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (fgets(buf, (int)sz, f))
		buf[strcspn(buf, "\n")] = '\0';
	else
		err = -EINVAL;
	fclose(f);
	return err;
}

static int uprobe_pmu_read(struct uprobe_pmu *pmu)
{
	char line[64];
	int err;

	err = read_line("/sys/bus/event_source/devices/uprobe/type", line, sizeof(line));
	if (!err && sscanf(line, "%d", &pmu->type) != 1)
		err = -EINVAL;
	if (!err)
		err = read_line("/sys/bus/event_source/devices/uprobe/format/retprobe", line, sizeof(line));
	if (!err && (sscanf(line, "config:%d", &pmu->ret_bit) != 1 || pmu->ret_bit < 0 || pmu->ret_bit > 63))
		err = -EINVAL;
	if (err) {
		pmu->type = 0;
		return err == -ENOENT ? -EOPNOTSUPP : err;
	}
	return 0;
}

/*
 * One classic probe as a BPF link on a perf uprobe event (BPF_PERF_EVENT
 * links and their cookies: kernel 5.15, commit b89fbfbb854c "bpf: Implement
 * minimal BPF perf link"). The link holds the event, so the event's own fd
 * is closed at once: one fd per probe, not libbpf's two, which is what lets
 * thousands of functions fit the usual file limits.
 *
 * The event stays disabled. The program runs all the same: it hangs off
 * the trace event's program array, which the uprobe's handler runs before
 * it looks at any perf event (__uprobe_perf_func). An enabled event would
 * be scheduled on its CPU's context, and installing each new event there
 * reschedules all of them (ctx_resched): thousands of probes then attach
 * in quadratic time. Returns the link's fd or -errno.
 */
static int classic_probe(struct attacher *a, int prog_fd, const char *path, uint64_t offset, uint64_t cookie,
			 bool ret)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = (__u32)a->pmu.type,
		.config = ret ? 1ull << a->pmu.ret_bit : 0,
		.config1 = (__u64)(unsigned long)path,	/* uprobe_path */
		.config2 = offset,			/* probe_offset */
		.disabled = 1,
	};
	LIBBPF_OPTS(bpf_link_create_opts, lopts, .perf_event.bpf_cookie = cookie);
	/* System-wide: any task on CPU 0's context (a uprobe fires on every CPU); else that process's. */
	pid_t pid = a->pid > 0 ? a->pid : -1;
	int pfd, lfd;

	pfd = (int)syscall(__NR_perf_event_open, &attr, pid, pid > 0 ? -1 : 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return -errno;
	lfd = bpf_link_create(prog_fd, pfd, BPF_PERF_EVENT, &lopts);
	if (lfd < 0)
		lfd = -errno;
	close(pfd);
	return lfd;
}

/* Descriptors left for everything but the probes: maps, programs, per-CPU events, sockets. */
#define FD_HEADROOM 1024

int attach_fd_reserve(size_t probes)
{
	rlim_t want = (rlim_t)probes + FD_HEADROOM;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	if (rl.rlim_cur >= want)
		return 0;
	rl.rlim_cur = rl.rlim_max;
	if (rl.rlim_max < want) {
		/* Raising the hard limit takes CAP_SYS_RESOURCE; without it the soft one goes as far as it can. */
		struct rlimit more = { want, want };

		if (!setrlimit(RLIMIT_NOFILE, &more))
			return 0;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	return rl.rlim_cur >= want ? 0 : -EMFILE;
}

/* Out of descriptors: twice the limit, if the process may have it; false when it stays as it was. */
static bool fd_limit_grow(void)
{
	struct rlimit before, after;

	if (getrlimit(RLIMIT_NOFILE, &before))
		return false;
	attach_fd_reserve((size_t)before.rlim_cur * 2);
	return !getrlimit(RLIMIT_NOFILE, &after) && after.rlim_cur > before.rlim_cur;
}

static int attach_classic_one(struct attacher *a, const char *path, uint64_t offset, uint64_t cookie)
{
	int efd, rfd = -1, err;

	if (!a->pmu.type && (err = uprobe_pmu_read(&a->pmu)))
		return err;
	err = reserve_links(a, 2);
	if (err)
		return err;
	efd = classic_probe(a, bpf_program__fd(a->progs.entry), path, offset, cookie, false);
	if (efd == -EMFILE && fd_limit_grow())
		efd = classic_probe(a, bpf_program__fd(a->progs.entry), path, offset, cookie, false);
	if (efd < 0)
		return efd;
	if (wants_return(cookie)) {
		rfd = classic_probe(a, bpf_program__fd(a->progs.ret), path, offset, cookie, true);
		if (rfd == -EMFILE && fd_limit_grow())
			rfd = classic_probe(a, bpf_program__fd(a->progs.ret), path, offset, cookie, true);
		if (rfd < 0) {
			close(efd);
			return rfd;
		}
	}
	push_link(a, efd, false, cookie);
	if (rfd >= 0)
		push_link(a, rfd, true, cookie);
	return 0;
}

static bool fatal_attach_error(int err)
{
	/* Errors that no smaller set of offsets would avoid. */
	return err == -ENOMEM || err == -EPERM || err == -EACCES || err == -ENOENT || err == -EMFILE;
}

static int add_skip(struct attach_skip **skips, size_t *nr, size_t *cap, size_t index, int err)
{
	int e = array_reserve((void **)skips, cap, *nr + 1, sizeof(**skips));

	if (e)
		return e;
	(*skips)[*nr].index = index;
	(*skips)[*nr].err = err;
	(*nr)++;
	return 0;
}

struct attach_run {
	struct attacher *a;
	const char *path;
	const uint64_t *offsets;
	const uint64_t *cookies;
	struct attach_skip **skips;
	size_t *nr_skips;
	size_t cap_skips;
	int first_err;
};

/* cnt more functions done: 0, or -ECANCELED when the tick says to stop. */
static int tick(struct attacher *a, size_t cnt)
{
	a->nr_done += cnt;
	return a->tick && a->tick(a->tick_ctx, a->nr_done) ? -ECANCELED : 0;
}

/* Attach [lo, lo+cnt); on a refusal split in halves to isolate the offsets at fault. */
static int attach_split(struct attach_run *run, size_t lo, size_t cnt)
{
	struct attacher *a = run->a;
	int err;

	if (!cnt)
		return 0;
	if (a->mode == ATTACH_SESSION)
		err = attach_session_range(a, run->path, run->offsets + lo, run->cookies + lo, cnt);
	else if (a->mode == ATTACH_MULTI)
		err = attach_multi_range(a, run->path, run->offsets + lo, run->cookies + lo, cnt);
	else if (cnt == 1)
		err = attach_classic_one(a, run->path, run->offsets[lo], run->cookies[lo]);
	else
		err = -EAGAIN; /* classic goes one by one */
	if (!err) {
		a->nr_attached += cnt;
		return tick(a, cnt);
	}
	if (err != -EAGAIN && !run->first_err)
		run->first_err = err;
	if (fatal_attach_error(err))
		return err;
	if (cnt == 1)
		return add_skip(run->skips, run->nr_skips, &run->cap_skips, lo, err) ?: tick(a, 1);
	err = attach_split(run, lo, cnt / 2);
	if (err)
		return err;
	return attach_split(run, lo + cnt / 2, cnt - cnt / 2);
}

int attacher__attach_file(struct attacher *a, const char *path, const uint64_t *offsets,
			  const uint64_t *cookies, size_t cnt,
			  struct attach_skip **skips, size_t *nr_skips)
{
	struct attach_run run = {
		.a = a, .path = path, .offsets = offsets, .cookies = cookies,
		.skips = skips, .nr_skips = nr_skips,
	};
	size_t before = a->nr_attached;
	int err;

	*skips = NULL;
	*nr_skips = 0;
	err = attach_split(&run, 0, cnt);
	if (err)
		return err;
	if (a->nr_attached == before && cnt)
		return run.first_err ?: -EINVAL;
	return 0;
}

void attacher__set_tick(struct attacher *a, attach_tick_fn fn, void *ctx)
{
	a->tick = fn;
	a->tick_ctx = ctx;
	a->nr_done = 0;
}

size_t attacher__nr_attached(const struct attacher *a)
{
	return a->nr_attached;
}

const struct attach_link *attacher__links(const struct attacher *a, size_t *n)
{
	*n = a->nr_links;
	return a->links;
}

void attacher__forget_links(struct attacher *a)
{
	a->nr_links = 0;
}

struct link_rank {
	struct attach_link link;
	bool last;		/* the unwinder's */
	uint64_t calls;
	size_t index;		/* as made: entries before returns, and a stable sort */
};

static int rank_cmp(const void *pa, const void *pb)
{
	const struct link_rank *a = pa, *b = pb;

	if (a->last != b->last)
		return a->last ? 1 : -1;
	if (a->calls != b->calls)
		return a->calls > b->calls ? -1 : 1;
	return a->index < b->index ? -1 : a->index > b->index;
}

void attach_links_order(struct attach_link *links, size_t n, const uint64_t *calls, size_t nr_calls)
{
	struct link_rank *r = calls && n > 1 ? calloc(n, sizeof(*r)) : NULL;

	/* Without the memory, the order they were made in: entries before returns all the same. */
	if (!r)
		return;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = links[i].cookie & DLPROF_COOKIE_ID_MASK;

		r[i] = (struct link_rank){ .link = links[i], .index = i,
					   .last = links[i].cookie & DLPROF_COOKIE_UNWIND_MASK };
		if (!r[i].last && id < nr_calls)
			r[i].calls = calls[id];
	}
	qsort(r, n, sizeof(*r), rank_cmp);
	for (size_t i = 0; i < n; i++)
		links[i] = r[i].link;
	free(r);
}

enum attach_mode attacher__mode(const struct attacher *a)
{
	return a->mode;
}

void attacher__free(struct attacher *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr_links; i++)
		close(a->links[i].fd);
	free(a->links);
	free(a);
}
