// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe/attach.h"
#include "probe/detacher.h"
#include "util/array.h"

#ifndef SYS_close_range
#define SYS_close_range 436	/* kernel 5.9; every kernel the probes load on has it */
#endif

/* What a closing thread shares with the detacher: freed by the last of the two. */
struct detach_job {
	int *fds;		/* in closing order */
	size_t nr;
	int done_fd;
	atomic_int refs;	/* the thread's and the owner's */
	atomic_bool done;
	atomic_size_t closed;
};

struct detacher {
	size_t total;
	/* On a thread: */
	struct detach_job *job;
	pthread_t thread;
	/* In a process: */
	int sock;		/* -1: on a thread; else readable (end of file) once the closer has closed all */
	pid_t pid;		/* the closer */
	atomic_size_t *shared;	/* the closer's count of closed links, a page both see */
};

static void job_put(struct detach_job *job)
{
	if (atomic_fetch_sub(&job->refs, 1) != 1)
		return;
	close(job->done_fd);
	free(job->fds);
	free(job);
}

static void *detach_thread(void *arg)
{
	struct detach_job *job = arg;
	uint64_t one = 1;
	ssize_t n;

	for (size_t i = 0; i < job->nr; i++) {
		close(job->fds[i]);
		atomic_store(&job->closed, i + 1);
	}
	atomic_store(&job->done, true);
	/* The flag says it all; the fd only wakes poll(), and an eventfd write cannot fail here. */
	n = write(job->done_fd, &one, sizeof(one));
	(void)n;
	job_put(job);
	return NULL;
}

static int start_thread(struct detacher *d, int *fds, size_t nr)
{
	struct detach_job *job = calloc(1, sizeof(*job));
	int err;

	if (!job)
		return -ENOMEM;
	job->fds = fds;
	job->nr = nr;
	atomic_init(&job->refs, 2);
	atomic_init(&job->done, false);
	atomic_init(&job->closed, 0);
	job->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (job->done_fd < 0) {
		err = -errno;
		free(job);
		return err;
	}
	err = pthread_create(&d->thread, NULL, detach_thread, job);
	if (err) {
		close(job->done_fd);
		free(job);
		return -err;
	}
	d->job = job;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Every descriptor but keep[0..n) (ascending) closed: the closer must hold no pipe or socket of the profiler's. */
static void close_all_but(const int *keep, size_t n)
{
	unsigned int from = 0;

	for (size_t i = 0; i <= n; i++) {
		unsigned int to = i < n ? (unsigned int)keep[i] : ~0u;

		if (to > from)
			syscall(SYS_close_range, from, to - 1, 0);
		from = to + 1;
	}
}

/*
 * The closer process: async-signal-safe calls only (it is a fork of a
 * process that may have other threads). It waits for the profiler to have
 * dropped its copies (or to have died), so that each close here is the
 * last one and does the kernel's work, in the order given. Its socket
 * closes last, as it exits: the profiler's end then reads end of file.
 */
static void __attribute__((noreturn)) closer_main(int sock, const int *keep, size_t nr_keep, const int *order,
						  size_t nr, atomic_size_t *closed)
{
	sigset_t all;
	char go;

	/* A Ctrl-C meant for the profiler's process group must not cut the removal short. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	prctl(PR_SET_NAME, "dlprof-detach");
	close_all_but(keep, nr_keep);
	while (read(sock, &go, 1) < 0 && errno == EINTR)
		;
	for (size_t i = 0; i < nr; i++) {
		close(order[i]);
		atomic_store(closed, i + 1);
	}
	_exit(0);
}

/*
 * Closers the profiler stopped waiting for: reaped once they end, so that
 * a long-running profiler (the agent) keeps no zombie. The engine's thread
 * alone starts and frees detachers.
 */
static pid_t *abandoned;
static size_t nr_abandoned;

static void reap_abandoned(void)
{
	size_t k = 0;

	for (size_t i = 0; i < nr_abandoned; i++)
		if (waitpid(abandoned[i], NULL, WNOHANG) == 0)
			abandoned[k++] = abandoned[i];
	nr_abandoned = k;
}

static void abandon(pid_t pid)
{
	pid_t *slot = ARRAY_SLOT(abandoned, nr_abandoned);

	/* Without the memory it is a zombie until the profiler exits, then init's. */
	if (slot) {
		*slot = pid;
		nr_abandoned++;
	}
}

static int start_process(struct detacher *d, const int *fds, size_t nr)
{
	int *keep = calloc(nr + 1, sizeof(*keep));
	atomic_size_t *shared;
	int sv[2], err;

	if (!keep)
		return -ENOMEM;
	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED) {
		free(keep);
		return -errno;
	}
	atomic_init(shared, 0);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		err = -errno;
		goto fail;
	}
	memcpy(keep, fds, nr * sizeof(*keep));
	keep[nr] = sv[1];
	qsort(keep, nr + 1, sizeof(*keep), cmp_int);
	reap_abandoned();
	d->pid = fork();
	if (!d->pid)
		closer_main(sv[1], keep, nr + 1, fds, nr, shared);
	err = d->pid < 0 ? -errno : 0;
	close(sv[1]);
	if (err) {
		close(sv[0]);
		goto fail;
	}
	/* Ours go at once (the closer holds the links); then the closer's closes are the ones that count. */
	for (size_t i = 0; i < nr; i++)
		close(fds[i]);
	if (write(sv[0], "g", 1) < 0) {
		/* The closer is gone already: the kernel closed its copies as it exited. */
	}
	free(keep);
	d->sock = sv[0];
	d->shared = shared;
	return 0;
fail:
	free(keep);
	munmap(shared, sizeof(*shared));
	return err;
}

static bool any_classic(struct attacher *const *as, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (as[i] && attacher__mode(as[i]) == ATTACH_CLASSIC)
			return true;
	return false;
}

/* Every link of as[] in one array, in the order they close. */
static struct attach_link *gather(struct attacher *const *as, size_t n, const uint64_t *calls, size_t nr_calls,
				  size_t *total)
{
	struct attach_link *all;
	size_t cnt = 0, k = 0;

	for (size_t i = 0; i < n; i++) {
		size_t m = 0;

		if (as[i])
			attacher__links(as[i], &m);
		cnt += m;
	}
	all = calloc(cnt ?: 1, sizeof(*all));
	if (!all)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const struct attach_link *l;
		size_t m = 0;

		if (!as[i])
			continue;
		l = attacher__links(as[i], &m);
		/* An attacher with no link hands back NULL, which memcpy may not take even for 0 bytes. */
		if (m)
			memcpy(all + k, l, m * sizeof(*l));
		k += m;
	}
	attach_links_order(all, cnt, calls, nr_calls);
	*total = cnt;
	return all;
}

struct detacher *detacher__start_many(struct attacher *const *as, size_t n, const uint64_t *calls,
				      size_t nr_calls)
{
	struct detacher *d = calloc(1, sizeof(*d));
	struct attach_link *links = NULL;
	int *fds = NULL;
	int err = -ENOMEM;

	if (!d)
		goto fail;
	d->sock = -1;
	links = gather(as, n, calls, nr_calls, &d->total);
	fds = links ? calloc(d->total ?: 1, sizeof(*fds)) : NULL;
	if (!fds)
		goto fail;
	for (size_t i = 0; i < d->total; i++)
		fds[i] = links[i].fd;
	free(links);
	links = NULL;
	/* A process only where the kernel takes a grace period per link; else threads share theirs. */
	err = any_classic(as, n) && d->total ? start_process(d, fds, d->total) : -EAGAIN;
	if (!err)
		free(fds);
	else
		err = start_thread(d, fds, d->total);
	if (err)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		if (!as[i])
			continue;
		attacher__forget_links(as[i]);
		attacher__free(as[i]);
	}
	return d;
fail:
	free(links);
	free(fds);
	free(d);
	errno = -err;
	return NULL;
}

struct detacher *detacher__start(struct attacher *a)
{
	return detacher__start_many(&a, 1, NULL, 0);
}

int detacher__fd(const struct detacher *d)
{
	return d->sock >= 0 ? d->sock : d->job->done_fd;
}

bool detacher__done(const struct detacher *d)
{
	struct pollfd p = { .fd = d->sock, .events = POLLIN };

	if (d->sock < 0)
		return atomic_load(&d->job->done);
	return poll(&p, 1, 0) == 1;
}

void detacher__progress(const struct detacher *d, size_t *closed, size_t *total)
{
	*total = d->total;
	*closed = d->sock >= 0 ? atomic_load(d->shared) : atomic_load(&d->job->closed);
}

void detacher__free(struct detacher *d)
{
	if (!d)
		return;
	if (d->sock >= 0) {
		/* The closer goes on alone if it has not finished: the links are its own. */
		if (detacher__done(d))
			waitpid(d->pid, NULL, 0);
		else
			abandon(d->pid);
		close(d->sock);
		munmap(d->shared, sizeof(*d->shared));
	} else {
		if (detacher__done(d))
			pthread_join(d->thread, NULL);
		else
			pthread_detach(d->thread);
		job_put(d->job);
	}
	free(d);
}
