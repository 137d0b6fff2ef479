// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "probe/attach.h"
#include "probe/detacher.h"

struct detach_job {
	struct attacher *a;
	int done_fd;
	atomic_int refs;	/* the thread's and the owner's */
	atomic_bool done;
};

struct detacher {
	struct detach_job *job;
	pthread_t thread;
};

static void job_put(struct detach_job *job)
{
	if (atomic_fetch_sub(&job->refs, 1) != 1)
		return;
	close(job->done_fd);
	free(job);
}

static void *detach_thread(void *arg)
{
	struct detach_job *job = arg;
	uint64_t one = 1;
	ssize_t n;

	attacher__free(job->a);
	atomic_store(&job->done, true);
	/* The flag says it all; the fd only wakes poll(), and an eventfd write cannot fail here. */
	n = write(job->done_fd, &one, sizeof(one));
	(void)n;
	job_put(job);
	return NULL;
}

struct detacher *detacher__start(struct attacher *a)
{
	struct detacher *d = calloc(1, sizeof(*d));
	struct detach_job *job = calloc(1, sizeof(*job));
	int err;

	if (!d || !job) {
		err = ENOMEM;
		goto fail;
	}
	job->a = a;
	atomic_init(&job->refs, 2);
	atomic_init(&job->done, false);
	job->done_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (job->done_fd < 0) {
		err = errno;
		goto fail;
	}
	err = pthread_create(&d->thread, NULL, detach_thread, job);
	if (err) {
		close(job->done_fd);
		goto fail;
	}
	d->job = job;
	return d;
fail:
	free(job);
	free(d);
	errno = err;
	return NULL;
}

int detacher__fd(const struct detacher *d)
{
	return d->job->done_fd;
}

bool detacher__done(const struct detacher *d)
{
	return atomic_load(&d->job->done);
}

void detacher__free(struct detacher *d)
{
	if (!d)
		return;
	if (detacher__done(d))
		pthread_join(d->thread, NULL);
	else
		pthread_detach(d->thread);
	job_put(d->job);
	free(d);
}
