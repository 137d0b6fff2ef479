// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/caller_clock.h"
#include "util/clock.h"

static int task_clock_open(pid_t tid)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.inherit = 1,
		.inherit_thread = 1,
	};
	int fd = (int)syscall(SYS_perf_event_open, &attr, tid, -1 /* cpu: wherever it runs */, -1 /* group */,
			      PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The thread ids of pid into *tids; how many, or a negative errno (-E2BIG: more than the cap). */
static long list_threads(pid_t pid, pid_t *tids, size_t cap)
{
	char path[64];
	struct dirent *e;
	size_t n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		long tid = strtol(e->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (n == cap) {
			closedir(d);
			return -E2BIG;
		}
		tids[n++] = (pid_t)tid;
	}
	closedir(d);
	return (long)n;
}

size_t caller_clock__start(struct caller_clock *k, pid_t pid, size_t max)
{
	pid_t tids[CALLER_CLOCK_WINDOW_THREADS];
	long n = list_threads(pid, tids, max < CALLER_CLOCK_WINDOW_THREADS ? max : CALLER_CLOCK_WINDOW_THREADS);

	*k = (struct caller_clock){};
	if (n <= 0)
		return 0;
	k->fds = calloc((size_t)n, sizeof(*k->fds));
	if (!k->fds)
		return 0;
	for (long i = 0; i < n; i++) {
		int fd = task_clock_open(tids[i]);

		/* Gone since listed: nothing of it to read. */
		if (fd == -ESRCH)
			continue;
		if (fd < 0) {
			caller_clock__stop(k);
			return 0;
		}
		k->fds[k->nr++] = fd;
	}
	if (!k->nr)
		caller_clock__stop(k);
	return k->nr;
}

void caller_clock__stop(struct caller_clock *k)
{
	for (size_t i = 0; i < k->nr; i++)
		close(k->fds[i]);
	free(k->fds);
	*k = (struct caller_clock){};
}

bool caller_clock__exact(const struct caller_clock *k)
{
	return k->fds != NULL;
}

double caller_clock__read(const struct caller_clock *k, pid_t pid, double *exact)
{
	struct timespec ts;
	uint64_t sum = 0;
	clockid_t id;

	*exact = -1;
	/* Gone or not by the process clock: an exited thread's event still reads. */
	if (clock_getcpuclockid(pid, &id) || clock_gettime(id, &ts))
		return -1;
	for (size_t i = 0; i < k->nr; i++) {
		uint64_t v;

		if (read(k->fds[i], &v, sizeof(v)) != sizeof(v))
			return timespec_seconds(&ts);
		sum += v;
	}
	if (k->fds)
		*exact = (double)sum * 1e-9;
	return timespec_seconds(&ts);
}
