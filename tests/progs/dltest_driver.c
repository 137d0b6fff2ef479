// SPDX-License-Identifier: GPL-2.0-only
/*
 * Calls the test library in the patterns the integration tests check.
 * Usage: dltest_driver [--wait] MODE ARGS...
 *   --wait: print "ready <pid>" and wait for a line on stdin before working,
 *           and for another one before exiting (for -p tests).
 * The modes whose counters the tests check measure each probed call themselves,
 * by the thread's own clocks and rusage, and print the sums on stderr
 * ("dltest: page_faults N"): the tests compare the profiler with that, never
 * with a figure that assumes a page size, THP or scheduler settings.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <time.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "dltest.h"

static volatile int sink;

/* Per-call walls kept for the median: more calls than any test makes. */
#define MAX_MEASURED 4096

/* The calling thread's own view of the calls wrapped in MEASURED(). */
static struct {
	unsigned long long thread_cpu_ns;
	unsigned long long page_faults;		/* ru_minflt + ru_majflt */
	unsigned long long context_switches;	/* ru_nvcsw + ru_nivcsw */
	unsigned long long involuntary_switches;	/* ru_nivcsw: preemptions, which may fall outside the probes */
	unsigned long long wall_ns[MAX_MEASURED];
	long calls;
} oracle;

struct sample {
	unsigned long long cpu_ns, wall_ns, faults, switches, involuntary;
};

static unsigned long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void sample_rusage(struct sample *s)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru))
		exit(5);
	s->faults = (unsigned long long)(ru.ru_minflt + ru.ru_majflt);
	s->switches = (unsigned long long)(ru.ru_nvcsw + ru.ru_nivcsw);
	s->involuntary = (unsigned long long)ru.ru_nivcsw;
}

static void sample_clocks(struct sample *s)
{
	s->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	s->wall_ns = clock_ns(CLOCK_MONOTONIC);
}

/*
 * The counters are read next to the call, the clocks outside them, so that
 * a first read of a clock (the vDSO's pages faulting in) is not counted.
 */
static void sample_begin(struct sample *s)
{
	sample_clocks(s);
	sample_rusage(s);
}

static void sample_end(struct sample *s)
{
	sample_rusage(s);
	sample_clocks(s);
}

static void oracle_add(const struct sample *a, const struct sample *b)
{
	oracle.thread_cpu_ns += b->cpu_ns - a->cpu_ns;
	oracle.page_faults += b->faults - a->faults;
	oracle.context_switches += b->switches - a->switches;
	oracle.involuntary_switches += b->involuntary - a->involuntary;
	if (oracle.calls < MAX_MEASURED)
		oracle.wall_ns[oracle.calls] = b->wall_ns - a->wall_ns;
	oracle.calls++;
}

/* Run one probed call between two samples of the thread's own counters. */
#define MEASURED(call)					\
	do {						\
		struct sample s0_, s1_;			\
							\
		sample_begin(&s0_);			\
		call;					\
		sample_end(&s1_);			\
		oracle_add(&s0_, &s1_);			\
	} while (0)

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

static void oracle_print(void)
{
	long n = oracle.calls < MAX_MEASURED ? oracle.calls : MAX_MEASURED;

	if (!oracle.calls)
		return;
	qsort(oracle.wall_ns, (size_t)n, sizeof(oracle.wall_ns[0]), cmp_ull);
	fprintf(stderr, "dltest: calls %ld\n", oracle.calls);
	fprintf(stderr, "dltest: thread_cpu_ns %llu\n", oracle.thread_cpu_ns);
	fprintf(stderr, "dltest: page_faults %llu\n", oracle.page_faults);
	fprintf(stderr, "dltest: context_switches %llu\n", oracle.context_switches);
	fprintf(stderr, "dltest: involuntary_switches %llu\n", oracle.involuntary_switches);
	fprintf(stderr, "dltest: wall_ns_p50 %llu\n", oracle.wall_ns[(n - 1) / 2]);
}

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

/*
 * n steps of a caller's own work: what steady_calls does between calls, and
 * what work_steps_for_us times. A chain of multiply-adds in a register: a
 * loop of adds to one word of memory runs in a fast mode of some CPUs
 * that any serializing instruction ends for microseconds (an lfence made
 * such an 18 us loop 2 us slower), so its pace would say what the CPU does
 * after a trap, not what the probes cost.
 */
static void work_steps(long n)
{
	static unsigned long long state = 1;
	unsigned long long x = state;

	for (long k = 0; k < n; k++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	state = x;
	sink = (int)x;
}

/*
 * The 8 bytes of the file at path, shared: the calls made so far, which a
 * test reads whenever it scrapes. Every caller thread adds its own.
 */
static volatile unsigned long long *count_file(const char *path)
{
	int fd = path ? open(path, O_RDWR | O_CREAT | O_TRUNC, 0600) : -1;
	void *count;

	if (fd < 0 || ftruncate(fd, sizeof(unsigned long long)))
		exit(5);
	count = mmap(NULL, sizeof(unsigned long long), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (count == MAP_FAILED)
		exit(5);
	return count;
}

/*
 * Calls dlt_test_je (a probe the kernel emulates, as most are) at a steady
 * pace, work steps of the caller's own work between calls, until killed,
 * adding each to count.
 */
static void steady_calls(long work, volatile unsigned long long *count)
{
	for (unsigned long long i = 1;; i++) {
		sink = dlt_test_je((int)i);
		work_steps(work);
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
	}
}

struct flat_out {
	long work;
	volatile unsigned long long *count;
};

static void *flat_out_calls(void *arg)
{
	const struct flat_out *f = arg;

	steady_calls(f->work, f->count);
	return NULL;
}

/*
 * A server's pace: per_s calls of dlt_test_je a second, set by the clock
 * (its clients), each followed by work steps; between them it sleeps, a
 * millisecond at a time. Behind (descheduled, or its calls took longer),
 * it catches up, as a server drains its queue. Counts into path as
 * steady_calls does.
 */
static void paced_calls(long per_s, long work, volatile unsigned long long *count)
{
	unsigned long long t0 = clock_ns(CLOCK_MONOTONIC), i = 0;
	struct timespec next;

	if (per_s <= 0)
		exit(5);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		unsigned long long due = (clock_ns(CLOCK_MONOTONIC) - t0) * (unsigned long long)per_s / 1000000000ULL;

		while (i < due) {
			sink = dlt_test_je((int)++i);
			work_steps(work);
			__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
}

/*
 * Steps of steady_calls' work that take us microseconds on this machine,
 * timed on the thread's own clock: a test asks for a pace, not for steps,
 * since machines run the steps at several times each other's speed.
 */
static long work_steps_for_us(long us)
{
	const long probe = 4000000;
	unsigned long long t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), ns;

	work_steps(probe);
	ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return ns ? (long)((double)us * 1e3 * (double)probe / (double)ns) : probe;
}

/*
 * A thread that names itself "worker-<i>", makes its calls, renames itself
 * "done-<i>" (after its last call: the trace must keep the name it called
 * under) and exits. Its tid and name go to stderr as the test's oracle.
 */
struct named_thread {
	long index, calls;
	int rename;		/* then renamed "again-<i>", one more call: the later name is the one kept */
};

static void *named_thread_calls(void *arg)
{
	const struct named_thread *nt = arg;
	char name[16];

	snprintf(name, sizeof(name), "worker-%ld", nt->index);
	if (pthread_setname_np(pthread_self(), name))
		exit(6);
	fprintf(stderr, "dltest: thread %d %s\n", gettid(), name);
	thread_calls((void *)nt->calls);
	if (nt->rename) {
		snprintf(name, sizeof(name), "again-%ld", nt->index);
		pthread_setname_np(pthread_self(), name);
		fprintf(stderr, "dltest: thread %d %s\n", gettid(), name);
		thread_calls((void *)1);
	}
	snprintf(name, sizeof(name), "done-%ld", nt->index);
	pthread_setname_np(pthread_self(), name);
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
	} else if (!strcmp(mode, "namedthreads")) {
		/*
		 * namedthreads T N [rename]: T threads one after the other, each named
		 * worker-<i>, N calls of dlt_add each; rename: then one more as again-<i>
		 */
		for (long i = 0; i < n; i++) {
			struct named_thread nt = { .index = i, .calls = m, .rename = argc > 3 && !strcmp(argv[3], "rename") };
			pthread_t t;

			if (pthread_create(&t, NULL, named_thread_calls, &nt))
				return 3;
			pthread_join(t, NULL);
		}
	} else if (!strcmp(mode, "recurse")) {	/* recurse DEPTH REPS */
		for (long i = 0; i < m; i++)
			sink = dlt_recurse((int)n);
	} else if (!strcmp(mode, "sleep")) {	/* sleep MS N */
		for (long i = 0; i < m; i++)
			MEASURED(dlt_sleep_ms((int)n));
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
			MEASURED(dlt_touch_pages((int)n));
	} else if (!strcmp(mode, "spin")) {	/* spin MS N */
		for (long i = 0; i < m; i++)
			MEASURED(dlt_spin_ms((int)n));
	} else if (!strcmp(mode, "migrate")) {	/* migrate MS N: each call changes CPU halfway */
		for (long i = 0; i < m; i++)
			MEASURED(dlt_spin_migrate((int)n));
	} else if (!strcmp(mode, "nap")) {	/* nap K N: N calls sleeping K times */
		for (long i = 0; i < m; i++)
			MEASURED(dlt_nap((int)n));
	} else if (!strcmp(mode, "spintouch")) {	/* spintouch MS K N */
		for (long i = 0; i < atol(argv[3]); i++)
			MEASURED(dlt_spin_touch((int)n, (int)m));
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
	} else if (!strcmp(mode, "steady")) {	/* steady WORK PATH: dlt_test_je, then WORK steps of work, until killed */
		steady_calls(n, count_file(argv[2]));
	} else if (!strcmp(mode, "steady-us")) {	/* steady-us US PATH: as steady, US microseconds of work a call */
		steady_calls(work_steps_for_us(n), count_file(argv[2]));
	} else if (!strcmp(mode, "paced")) {	/* paced PER_S US PATH: PER_S calls a second, US us of work each */
		paced_calls(n, work_steps_for_us(atol(argv[2])), count_file(argv[3]));
	} else if (!strcmp(mode, "mixed")) {
		/* mixed PER_S US FLAT_US PATH: as paced, and a second thread flat out, FLAT_US us of work a call */
		struct flat_out f = { work_steps_for_us(atol(argv[3])), count_file(argv[4]) };
		pthread_t t;

		if (argc < 5 || pthread_create(&t, NULL, flat_out_calls, &f))
			return 5;
		paced_calls(n, work_steps_for_us(m), f.count);
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
	oracle_print();
	if (wait) {
		printf("done\n");
		fflush(stdout);
		wait_line();
	}
	return ret;
}
