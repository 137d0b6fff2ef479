// SPDX-License-Identifier: GPL-2.0-only
/*
 * A caller's clock in a window against what its threads count themselves
 * (their own thread CPU clocks, which the kernel brings up to date for
 * the thread that reads them): the events read every thread's time to the
 * moment, threads born after the start included. (Reading its own clock
 * brings a thread's process clock up to date too, so these threads cannot
 * show how far behind that clock falls: the agent's tests do.) Real perf
 * events of real processes; skipped where perf events cannot be opened
 * (not root).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/caller_clock.h"

/* What the child's threads publish: each its own CPU time, ns, as fresh as its loop. */
struct published {
	volatile uint64_t thread_ns[2];
	volatile int spawn;		/* the parent asks for the second thread */
};

static struct published *pub;

static uint64_t own_thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void *spin(void *arg)
{
	volatile uint64_t *mine = arg;

	for (;;)
		*mine = own_thread_ns();
	return NULL;
}

static pid_t spawn_spinner(void)
{
	pid_t pid;

	pub = mmap(NULL, sizeof(*pub), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(pub != MAP_FAILED);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pthread_t t;

		while (!pub->spawn)
			pub->thread_ns[0] = own_thread_ns();
		if (pthread_create(&t, NULL, spin, (void *)&pub->thread_ns[1]))
			_exit(1);
		spin((void *)&pub->thread_ns[0]);
	}
	while (!pub->thread_ns[0])
		usleep(100);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	munmap(pub, sizeof(*pub));
}

static uint64_t published_ns(void)
{
	return pub->thread_ns[0] + pub->thread_ns[1];
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * Over short spans, the events' time against the threads' own: how far
 * apart, ms, in the median span. A reader preempted between the two reads
 * puts one span off by its wait; the median is the clocks'.
 */
static double compare(pid_t pid, const struct caller_clock *k)
{
	double exact0, off[41];
	uint64_t own0;

	assert_true(caller_clock__read(k, pid, &exact0) >= 0);
	own0 = published_ns();
	for (int i = 0; i < 41; i++) {
		double exact1;
		uint64_t own1;

		sleep_ms(7);
		assert_true(caller_clock__read(k, pid, &exact1) >= 0);
		own1 = published_ns();
		assert_true(exact1 >= 0);
		off[i] = fabs((exact1 - exact0) * 1e3 - (double)(own1 - own0) * 1e-6);
		exact0 = exact1;
		own0 = own1;
	}
	qsort(off, 41, sizeof(off[0]), by_value);
	return off[20];
}

static void events_read_to_the_moment(void **state)
{
	pid_t pid = spawn_spinner();
	struct caller_clock k;
	double off_ms;

	(void)state;
	if (!caller_clock__start(&k, pid, CALLER_CLOCK_WINDOW_THREADS)) {
		reap(pid);
		skip();	/* no perf events here: not root, or perf_event_paranoid forbids them */
	}
	assert_true(caller_clock__exact(&k));
	off_ms = compare(pid, &k);
	print_message("one thread: the events off by %.3f ms in the median 7 ms span\n", off_ms);
	/* What the threads count is read a few us after the events; a tick behind would be 1 ms or more. */
	assert_true(off_ms < 0.2);

	/* A thread born after the start: its maker's event counts it. */
	pub->spawn = 1;
	while (!pub->thread_ns[1])
		usleep(100);
	off_ms = compare(pid, &k);
	print_message("two threads: the events off by %.3f ms in the median span\n", off_ms);
	assert_true(off_ms < 0.2);
	caller_clock__stop(&k);
	assert_false(caller_clock__exact(&k));
	reap(pid);
}

static void too_many_threads_read_by_process_clock(void **state)
{
	pid_t pid = spawn_spinner();
	struct caller_clock k;
	double exact;

	(void)state;
	pub->spawn = 1;
	while (!pub->thread_ns[1])
		usleep(100);
	/* Two threads, room for one: none opened, its process clock read. */
	assert_int_equal(caller_clock__start(&k, pid, 1), 0);
	assert_false(caller_clock__exact(&k));
	assert_true(caller_clock__read(&k, pid, &exact) > 0);
	assert_true(exact < 0);
	reap(pid);
}

static void gone_reads_negative(void **state)
{
	pid_t pid = spawn_spinner();
	struct caller_clock k;
	double exact;

	(void)state;
	caller_clock__start(&k, pid, CALLER_CLOCK_WINDOW_THREADS);
	reap(pid);
	assert_true(caller_clock__read(&k, pid, &exact) < 0);
	caller_clock__stop(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(events_read_to_the_moment),
		cmocka_unit_test(too_many_threads_read_by_process_clock),
		cmocka_unit_test(gone_reads_negative),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
