// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls the test library in the patterns the integration tests check.
 * Usage: dltest_driver [--wait] MODE ARGS...
 *   --wait: print "ready <pid>" and wait for a line on stdin before working,
 *           and for another one before exiting (for -p tests).
 */
#include <dlfcn.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "dltest.h"

static volatile int sink;

static void wait_line(void)
{
	char buf[64];

	if (!fgets(buf, sizeof(buf), stdin))
		exit(3);
}

/* Short calls whose probe the kernel emulates (dlt_test_je's moves to its je). */
static void *thread_short_calls(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		sink = dlt_test_je((int)i);
	return NULL;
}

static void *thread_calls(void *arg)
{
	long n = (long)arg;

	for (long i = 0; i < n; i++)
		sink = dlt_add((int)i, 1);
	return NULL;
}

static int run(int argc, char **argv)
{
	const char *mode = argv[0];
	long n = argc > 1 ? atol(argv[1]) : 0;
	long m = argc > 2 ? atol(argv[2]) : 0;

	if (!strcmp(mode, "count")) {		/* count N: N calls of dlt_add */
		thread_calls((void *)n);
	} else if (!strcmp(mode, "threads") || !strcmp(mode, "shortthreads")) {
		/* threads T N: T threads, N calls of dlt_add each; shortthreads: of dlt_test_je */
		void *(*body)(void *) = mode[0] == 't' ? thread_calls : thread_short_calls;
		pthread_t t[64];

		if (n < 1 || n > 64)
			return 2;
		for (long i = 0; i < n; i++)
			pthread_create(&t[i], NULL, body, (void *)m);
		for (long i = 0; i < n; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(mode, "recurse")) {	/* recurse DEPTH REPS */
		for (long i = 0; i < m; i++)
			sink = dlt_recurse((int)n);
	} else if (!strcmp(mode, "sleep")) {	/* sleep MS N */
		for (long i = 0; i < m; i++)
			dlt_sleep_ms((int)n);
	} else if (!strcmp(mode, "longjmp")) {	/* longjmp N M: N escapes from dlt_longjmp, N from dlt_outer, then M dlt_add */
		for (long i = 0; i < n; i++) {
			jmp_buf env;

			if (!setjmp(env))
				dlt_longjmp(env);
			if (!setjmp(env))
				dlt_outer(env);
		}
		thread_calls((void *)m);
	} else if (!strcmp(mode, "fork")) {	/* fork N: parent and child N calls each */
		pid_t pid = fork();

		thread_calls((void *)n);
		if (pid == 0)
			_exit(0);
		waitpid(pid, NULL, 0);
	} else if (!strcmp(mode, "dlopen")) {	/* dlopen PATH N: load the library now, then N calls */
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*add)(int, int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 2;
		}
		add = (int (*)(int, int))dlsym(h, "dlt_add");
		for (long i = 0; i < m; i++)
			sink = add((int)i, 1);
	} else if (!strcmp(mode, "nested")) {	/* nested PATH N: dlt_apply here calls dlt_add of PATH, N times */
		void *h = dlopen(argv[1], RTLD_NOW);
		int (*add)(int, int);

		if (!h) {
			fprintf(stderr, "%s\n", dlerror());
			return 2;
		}
		add = (int (*)(int, int))dlsym(h, "dlt_add");
		for (long i = 0; i < m; i++)
			sink = dlt_apply(add, (int)i);
	} else if (!strcmp(mode, "ifunc")) {	/* ifunc N: N calls of the IFUNC dlt_ifunc_add */
		for (long i = 0; i < n; i++)
			sink = dlt_ifunc_add((int)i, 1);
	} else if (!strcmp(mode, "strlen")) {	/* strlen N: N calls of libc's strlen (an IFUNC) */
		size_t (*volatile len)(const char *) = strlen;

		for (long i = 0; i < n; i++)
			sink = (int)len(mode);
	} else if (!strcmp(mode, "pages")) {	/* pages K N: N calls touching K fresh pages */
		for (long i = 0; i < m; i++)
			dlt_touch_pages((int)n);
	} else if (!strcmp(mode, "spin")) {	/* spin MS N */
		for (long i = 0; i < m; i++)
			dlt_spin_ms((int)n);
	} else if (!strcmp(mode, "migrate")) {	/* migrate MS N: each call changes CPU halfway */
		for (long i = 0; i < m; i++)
			dlt_spin_migrate((int)n);
	} else if (!strcmp(mode, "nap")) {	/* nap K N: N calls sleeping K times */
		for (long i = 0; i < m; i++)
			dlt_nap((int)n);
	} else if (!strcmp(mode, "spintouch")) {	/* spintouch MS K N */
		for (long i = 0; i < atol(argv[3]); i++)
			dlt_spin_touch((int)n, (int)m);
	} else if (!strcmp(mode, "noise")) {	/* noise SECONDS: burn CPU and fault pages, unprofiled */
		time_t end = time(NULL) + n;
		long psz = sysconf(_SC_PAGESIZE);

		while (time(NULL) < end) {
			char *p = mmap(NULL, 16 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			for (int i = 0; p != MAP_FAILED && i < 16; i++)
				p[i * psz] = 1;
			if (p != MAP_FAILED)
				munmap(p, 16 * psz);
		}
	} else if (!strcmp(mode, "asm")) {	/* asm N: N calls of each dltest_asm.S function */
		for (long i = 0; i < n; i++) {
			sink = dlt_test_je((int)(i % 3));
			dlt_loop_head((int)(i % 4));
			sink = dlt_loop_second((int)(i % 5));
		}
	} else if (!strcmp(mode, "exit")) {	/* exit CODE */
		return (int)n;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}

/* DLTEST_CPU=N pins the driver to CPU N (tests that share a CPU on purpose). */
static void pin_from_env(void)
{
	const char *cpu = getenv("DLTEST_CPU");
	cpu_set_t set;

	if (!cpu)
		return;
	CPU_ZERO(&set);
	CPU_SET(atoi(cpu), &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		exit(4);
}

int main(int argc, char **argv)
{
	int wait = argc > 1 && !strcmp(argv[1], "--wait");
	int ret;

	pin_from_env();
	if (argc < 2 + wait)
		return 2;
	if (wait) {
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		wait_line();
	}
	ret = run(argc - 1 - wait, argv + 1 + wait);
	if (dlt_thread_cpu_ns)
		fprintf(stderr, "dltest: thread_cpu_ns %llu\n", dlt_thread_cpu_ns);
	if (wait) {
		printf("done\n");
		fflush(stdout);
		wait_line();
	}
	return ret;
}
