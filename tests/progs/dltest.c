// SPDX-License-Identifier: GPL-2.0-only
/* A library with known call behaviour for the integration tests. */
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dltest.h"

/* Calls through a volatile pointer cannot be turned into loops or tail calls. */
static int (*volatile recurse_again)(int) = dlt_recurse;
static void (*volatile longjmp_from)(jmp_buf) = dlt_longjmp;

__attribute__((noinline)) int dlt_add(int a, int b)
{
	__asm__ volatile("" ::: "memory");
	return a + b;
}

__attribute__((noinline)) int dlt_recurse(int depth)
{
	if (depth <= 1)
		return 1;
	return 1 + recurse_again(depth - 1);
}

__attribute__((noinline)) void dlt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

__attribute__((noinline)) void dlt_longjmp(jmp_buf env)
{
	longjmp(env, 1);
}

/* Two probed frames abandoned at once by one longjmp. */
__attribute__((noinline)) void dlt_outer(jmp_buf env)
{
	longjmp_from(env);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void dlt_touch_pages(int pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)(pages * psz), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	for (int i = 0; i < pages; i++)
		((volatile char *)p)[(long)i * psz] = 1;
	munmap(p, (size_t)(pages * psz));
}

/* Calls fn, which may live in another library: nesting across libraries. */
__attribute__((noinline)) int dlt_apply(int (*fn)(int, int), int a)
{
	int r = fn(a, 1);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* A GNU IFUNC: a probe on the resolver would count once per process, not per call. */
static int ifunc_add_plain(int a, int b)
{
	return a + b;
}

static int ifunc_add_twice(int a, int b)
{
	return (a + b) * 2 / 2;
}

static int (*resolve_ifunc_add(void))(int, int)
{
	return getenv("DLTEST_IFUNC_TWICE") ? ifunc_add_twice : ifunc_add_plain;
}

int dlt_ifunc_add(int a, int b) __attribute__((ifunc("resolve_ifunc_add")));

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void spin_until(double end_ms)
{
	while (mono_ms() < end_ms)
		__asm__ volatile("" ::: "memory");
}

/* Busy for ms of wall time. */
__attribute__((noinline)) void dlt_spin_ms(int ms)
{
	spin_until(mono_ms() + ms);
}

/* Busy for ms, moving itself to another CPU halfway. */
__attribute__((noinline)) void dlt_spin_migrate(int ms)
{
	double start = mono_ms();
	int cpu = sched_getcpu(), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	spin_until(start + ms / 2.0);
	CPU_ZERO(&set);
	CPU_SET((cpu + 1) % ncpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	spin_until(start + ms);
}

/* Sleeps a millisecond, naps times. */
__attribute__((noinline)) void dlt_nap(int naps)
{
	for (int i = 0; i < naps; i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
}

/* Busy for ms, touching pages fresh pages on the way. */
__attribute__((noinline)) void dlt_spin_touch(int ms, int pages)
{
	double start = mono_ms();

	dlt_touch_pages(pages);
	spin_until(start + ms);
}
