// SPDX-License-Identifier: GPL-2.0-only
/*
 * Throws, catches, unwinds and cancels through libdlcxx and libstdc++ in the
 * patterns the unwinding tests check. Everything it prints is the same from
 * run to run, so a profiled run's output must equal an unprofiled one's.
 * Usage: dlcxx_driver MODE [N]
 *   throw1 throw3 catch_inside rethrow nested backtrace cancel exit_thread
 *   stdlib: libstdc++'s own throws (vector::at, stoi, substr)
 *   threads N: N threads throwing at once
 *   all: every mode above (threads with 4)
 *   exit_in_catch: a thread ends with pthread_exit, then the process with
 *     exit(0), each inside a library function's catch handler
 * Ends with the oracle: "calls NAME N" / "unwound NAME N" / "open NAME N" per
 * library function (libdlcxx's from the library; libstdc++'s, for stdlib,
 * counted here), printed before the exit in exit_in_catch.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "dlcxx.h"

#define ROUNDS 50

static bool ran_stdlib;

static void throw_n(int depth)
{
	int caught = 0, code = 0;
	const char *what = "";

	for (int i = 0; i < ROUNDS; i++) {
		try {
			dlx_throw(depth, depth);
			printf("throw%d: not thrown\n", depth);
		} catch (const dlx::error &e) {
			caught++;
			code = e.code;
			what = "dlx::error";
			if (strcmp(e.what(), depth == 1 ? "dlx_throw" : "dlx::raise"))
				what = e.what();
		}
	}
	printf("throw%d: caught %d %s code %d in the driver\n", depth, caught, what, code);
}

static void catch_inside(void)
{
	long sum = 0;

	for (int i = 0; i < ROUNDS; i++)
		sum += dlx_catch_inside(1) + dlx_catch_inside(3);
	printf("catch_inside: the library caught them, sum %ld\n", sum);
}

static void rethrow(void)
{
	int caught = 0;
	long sum = 0;

	for (int i = 0; i < ROUNDS; i++) {
		try {
			dlx_rethrow(3);
		} catch (const dlx::error &e) {
			caught += e.code == 3;
		}
		sum += dlx_catch_rethrown(2);
	}
	printf("rethrow: caught %d rethrown in the driver, the library %ld\n", caught, sum);
}

static void nested(void)
{
	long sum = 0;

	for (int i = 0; i < ROUNDS; i++)
		sum += dlx_nested(1) + dlx_nested(3);
	printf("nested: %ld\n", sum);
}

struct thread_work {
	pthread_barrier_t *start;
	int caught_inside, caught_here;
};

static void *thrower(void *arg)
{
	auto *w = static_cast<thread_work *>(arg);

	pthread_barrier_wait(w->start);
	for (int i = 0; i < ROUNDS; i++) {
		w->caught_inside += dlx_catch_inside(3) == 3;
		try {
			dlx_throw(2, 2);
		} catch (const dlx::error &e) {
			w->caught_here += e.code == 2;
		}
	}
	return NULL;
}

static void threads(int n)
{
	std::vector<pthread_t> tids(n);
	std::vector<thread_work> work(n);
	pthread_barrier_t start;
	int inside = 0, here = 0;

	pthread_barrier_init(&start, NULL, n);
	for (int i = 0; i < n; i++) {
		work[i] = { &start, 0, 0 };
		if (pthread_create(&tids[i], NULL, thrower, &work[i]))
			abort();
	}
	for (int i = 0; i < n; i++) {
		pthread_join(tids[i], NULL);
		inside += work[i].caught_inside;
		here += work[i].caught_here;
	}
	pthread_barrier_destroy(&start);
	printf("threads %d: caught %d in the library, %d in the driver\n", n, inside, here);
}

static void backtraces(void)
{
	char names[4096];
	int n;

	n = dlx_backtrace(5, names, sizeof(names));
	printf("backtrace: %d frames: %s\n", n, names);
	n = dlx_unwind_backtrace(5, names, sizeof(names));
	printf("_Unwind_Backtrace: %d frames: %s\n", n, names);
}

static sem_t blocked;

static void tell_blocked(void)
{
	sem_post(&blocked);
}

static void driver_handler(void *what)
{
	printf("cleanup: %s ran\n", static_cast<const char *>(what));
}

/* The driver's own frame and cleanup handler lie above the library's probed frames. */
static void *blocking_thread(void *fn)
{
	struct dlx_thread_arg arg = { 3, tell_blocked };
	void *r;

	pthread_cleanup_push(driver_handler, const_cast<char *>("driver handler"));
	r = reinterpret_cast<void *(*)(void *)>(fn)(&arg);
	pthread_cleanup_pop(0);
	return r;
}

static void cancel_or_exit(bool cancel)
{
	const char *mode = cancel ? "cancel" : "exit_thread";
	pthread_t tid;
	void *ret;

	dlx_cleanup_log();	/* only this thread's cleanups, not those of earlier modes */
	sem_init(&blocked, 0, 0);
	if (pthread_create(&tid, NULL, blocking_thread,
			   reinterpret_cast<void *>(cancel ? dlx_cleanup_cancel : dlx_cleanup_exit)))
		abort();
	while (sem_wait(&blocked))
		;
	if (cancel)
		pthread_cancel(tid);
	pthread_join(tid, &ret);
	printf("%s: thread ended %s; library cleanups: %s\n", mode,
	       ret == PTHREAD_CANCELED ? "cancelled" : ret == (void *)42 ? "with 42" : "otherwise",
	       dlx_cleanup_log());
	sem_destroy(&blocked);
}

/* pthread_exit from a catch handler, under the driver's own cleanup handler. */
static void *exit_in_catch_thread(void *)
{
	pthread_cleanup_push(driver_handler, const_cast<char *>("driver handler"));
	dlx_exit_in_catch(3, 0, NULL);
	pthread_cleanup_pop(0);
	return NULL;
}

static void print_oracle(void);

static void exit_in_catch(void)
{
	pthread_t tid;
	void *ret;

	dlx_cleanup_log();
	if (pthread_create(&tid, NULL, exit_in_catch_thread, NULL))
		abort();
	pthread_join(tid, &ret);
	printf("exit_in_catch: thread ended %s; library cleanups: %s\n",
	       ret == (void *)42 ? "with 42" : "otherwise", dlx_cleanup_log());
	dlx_exit_in_catch(2, 1, print_oracle);
}

/* libstdc++'s functions this mode makes, and how many calls of each it makes. */
static struct {
	const char *name;
	unsigned long calls, unwound;
} std_calls[] = {
	{ "__cxa_allocate_exception", 0, 0 },
	{ "__cxa_throw", 0, 0 },
	{ "__cxa_begin_catch", 0, 0 },
	{ "__cxa_end_catch", 0, 0 },
	{ "_ZSt24__throw_out_of_range_fmtPKcz", 0, 0 },
	{ "_ZSt24__throw_invalid_argumentPKc", 0, 0 },
	{ "_ZSt20__throw_out_of_rangePKc", 0, 0 },
};

/* One exception thrown by a libstdc++ __throw_* function (index thrower) and caught once here. */
static void count_std_throw(int thrower)
{
	std_calls[0].calls++;			/* allocate: returns */
	std_calls[1].calls++;			/* __cxa_throw: never returns */
	std_calls[1].unwound++;
	std_calls[2].calls++;			/* the catch */
	std_calls[3].calls++;
	std_calls[thrower].calls++;
	std_calls[thrower].unwound++;
}

static volatile int sink;

static void stdlib(void)
{
	std::vector<int> v(3);
	std::string s("abc");
	std::string what_at, what_stoi, what_big, what_substr;
	volatile size_t far = 10;

	for (int i = 0; i < ROUNDS; i++) {
		try {
			sink = v.at(far);
		} catch (const std::out_of_range &e) {
			what_at = e.what();
			count_std_throw(4);
		}
		try {
			sink = std::stoi(s);
		} catch (const std::invalid_argument &e) {
			what_stoi = e.what();
			count_std_throw(5);
		}
		try {
			sink = std::stoi("99999999999999999999");
		} catch (const std::out_of_range &e) {
			what_big = e.what();
			count_std_throw(6);
		}
		try {
			sink = (int)s.substr(far).size();
		} catch (const std::out_of_range &e) {
			what_substr = e.what();
			count_std_throw(4);
		}
	}
	printf("stdlib: vector::at: %s\n", what_at.c_str());
	printf("stdlib: stoi(\"abc\"): %s\n", what_stoi.c_str());
	printf("stdlib: stoi(too big): %s\n", what_big.c_str());
	printf("stdlib: substr: %s\n", what_substr.c_str());
	ran_stdlib = true;
}

static int run(const char *mode, int n)
{
	bool all = !strcmp(mode, "all");
	bool known = all;

	if (all || !strcmp(mode, "throw1"))
		throw_n(1), known = true;
	if (all || !strcmp(mode, "throw3"))
		throw_n(3), known = true;
	if (all || !strcmp(mode, "catch_inside"))
		catch_inside(), known = true;
	if (all || !strcmp(mode, "rethrow"))
		rethrow(), known = true;
	if (all || !strcmp(mode, "nested"))
		nested(), known = true;
	if (all || !strcmp(mode, "threads"))
		threads(all ? 4 : n), known = true;
	if (all || !strcmp(mode, "backtrace"))
		backtraces(), known = true;
	if (all || !strcmp(mode, "cancel"))
		cancel_or_exit(true), known = true;
	if (all || !strcmp(mode, "exit_thread"))
		cancel_or_exit(false), known = true;
	if (all || !strcmp(mode, "stdlib"))
		stdlib(), known = true;
	/* Not in all: the process ends in it. */
	if (!strcmp(mode, "exit_in_catch"))
		exit_in_catch();
	return known ? 0 : -1;
}

static bool oracle_failed;

static void print_oracle(void)
{
	fflush(stdout);
	oracle_failed = dlx_report();
	for (auto &c : std_calls) {
		if (!ran_stdlib)
			break;
		printf("calls %s %lu\nunwound %s %lu\n", c.name, c.calls, c.name, c.unwound);
	}
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc < 2 || run(argv[1], argc > 2 ? atoi(argv[2]) : 4)) {
		fprintf(stderr, "usage: dlcxx_driver throw1|throw3|catch_inside|rethrow|nested|"
			"threads N|backtrace|cancel|exit_thread|stdlib|all|exit_in_catch\n");
		return 2;
	}
	print_oracle();
	return oracle_failed ? 1 : 0;
}
