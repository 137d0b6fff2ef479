// SPDX-License-Identifier: GPL-2.0-only
/* A library with known call behaviour for the integration tests. */
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
