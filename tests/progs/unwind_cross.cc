// SPDX-License-Identifier: GPL-2.0-only
/*
 * A program whose unwinders cross libc's frames: a C++ exception thrown by
 * qsort's comparator, threads cancelled while blocked in read() and
 * nanosleep(), backtrace() taken from qsort's comparator; and libc's
 * allocator, string and memory functions called in a loop. Its output is
 * the same whenever it runs correctly: the tests compare it alone and
 * profiled.
 *
 *	unwind_cross work N | qsort_throw | cancel_read | cancel_sleep | backtrace | all
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>

/* Through pointers: the compiler neither inlines nor drops the calls. */
static void *(*volatile p_malloc)(size_t) = malloc;
static void (*volatile p_free)(void *) = free;
static size_t (*volatile p_strlen)(const char *) = strlen;
static void *(*volatile p_memcpy)(void *, const void *, size_t) = memcpy;
static void *(*volatile p_memset)(void *, int, size_t) = memset;

static void work(long n)
{
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		size_t len = 16 + (size_t)(i % 200);
		char *a = (char *)p_malloc(len + 1), *b = (char *)p_malloc(len + 1);

		p_memset(a, 'a' + (int)(i % 26), len);
		a[len] = '\0';
		p_memcpy(b, a, len + 1);
		sum += p_strlen(b) + (unsigned char)b[len / 2];
		p_free(a);
		p_free(b);
	}
	printf("work: %ld rounds, sum %lu\n", n, sum);
}

struct thrown : std::runtime_error {
	int at;
	thrown(int at_) : std::runtime_error("comparator"), at(at_) {}
};

static int compares;

static int cmp_throw(const void *a, const void *b)
{
	if (++compares == 37)
		throw thrown(*(const int *)a);
	return *(const int *)a - *(const int *)b;
}

static void qsort_throw(void)
{
	int caught = 0;

	for (int round = 0; round < 50; round++) {
		int v[100];

		for (int i = 0; i < 100; i++)
			v[i] = (i * 7919 + round) % 1000;
		compares = 0;
		try {
			qsort(v, 100, sizeof(v[0]), cmp_throw);
		} catch (const thrown &) {
			caught++;
		}
	}
	printf("qsort_throw: %d of 50 caught\n", caught);
}

/* ---- cancellation of a thread blocked in libc ---- */

struct blocked {
	int fd;			/* read() blocks on it */
	bool sleep;		/* nanosleep() instead */
	volatile int cleaned;	/* what the unwinding ran on its way */
};

struct guard {
	blocked *b;
	~guard() { __atomic_add_fetch(&b->cleaned, 10, __ATOMIC_SEQ_CST); }
};

static void cleanup(void *arg)
{
	__atomic_add_fetch(&((blocked *)arg)->cleaned, 1, __ATOMIC_SEQ_CST);
}

static void *block(void *arg)
{
	blocked *b = (blocked *)arg;
	guard g = { b };
	char c;

	pthread_cleanup_push(cleanup, b);
	if (b->sleep) {
		struct timespec ts = { 60, 0 };

		nanosleep(&ts, NULL);
	} else if (read(b->fd, &c, 1) < 0) {
		perror("read");
	}
	pthread_cleanup_pop(0);
	return NULL;
}

static void cancel(const char *what, bool sleep)
{
	int ok = 0;

	for (int round = 0; round < 10; round++) {
		int fds[2];
		blocked b = { -1, sleep, 0 };
		pthread_t t;
		void *ret;

		if (pipe(fds))
			abort();
		b.fd = fds[0];
		pthread_create(&t, NULL, block, &b);
		usleep(20000);	/* blocked by now, or cancelled at the call: the same unwinding */
		pthread_cancel(t);
		pthread_join(t, &ret);
		ok += ret == PTHREAD_CANCELED && b.cleaned == 11;
		close(fds[0]);
		close(fds[1]);
	}
	printf("cancel_%s: %d of 10 cancelled with every cleanup\n", what, ok);
}

/* ---- backtrace() with libc's frames below ---- */

static char trace[1024];

static int cmp_backtrace(const void *a, const void *b)
{
	if (!trace[0]) {
		void *frames[64];
		int n = backtrace(frames, 64);
		size_t len = (size_t)snprintf(trace, sizeof(trace), "%d frames:", n);

		for (int i = 0; i < n && len < sizeof(trace); i++) {
			Dl_info info = {};

			dladdr(frames[i], &info);
			len += (size_t)snprintf(trace + len, sizeof(trace) - len, " %s",
						info.dli_sname ? info.dli_sname : "?");
		}
	}
	return *(const int *)a - *(const int *)b;
}

static void take_backtrace(void)
{
	int v[50];

	for (int i = 0; i < 50; i++)
		v[i] = (i * 31) % 50;
	qsort(v, 50, sizeof(v[0]), cmp_backtrace);
	printf("backtrace: %s\n", trace);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	bool all = !strcmp(mode, "all");

	if (!strcmp(mode, "work") || all)
		work(argc > 2 ? atol(argv[2]) : 10000);
	if (!strcmp(mode, "qsort_throw") || all)
		qsort_throw();
	if (!strcmp(mode, "cancel_read") || all)
		cancel("read", false);
	if (!strcmp(mode, "cancel_sleep") || all)
		cancel("sleep", true);
	if (!strcmp(mode, "backtrace") || all)
		take_backtrace();
	return 0;
}
