// SPDX-License-Identifier: GPL-2.0-only
/*
 * The C++ test library (dlcxx.h). Every function counts its own calls and
 * whether it leaves by an exception or a forced unwinding: the oracle the
 * tests compare the profiler's calls, timed and unwound with, and the calls
 * the process exits inside of, which never end.
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <unwind.h>

#include "dlcxx.h"

/* One table: the counter index, the exported symbol name. */
#define DLX_FUNCS(X)                                   \
	X(THROW, "dlx_throw")                          \
	X(CATCH_INSIDE, "dlx_catch_inside")            \
	X(RETHROW, "dlx_rethrow")                      \
	X(CATCH_RETHROWN, "dlx_catch_rethrown")        \
	X(TRANSLATE, "dlx_translate")                  \
	X(NESTED, "dlx_nested")                        \
	X(BACKTRACE, "dlx_backtrace")                  \
	X(UNWIND_BACKTRACE, "dlx_unwind_backtrace")    \
	X(CLEANUP_CANCEL, "dlx_cleanup_cancel")        \
	X(CLEANUP_EXIT, "dlx_cleanup_exit")            \
	X(EXIT_IN_CATCH, "dlx_exit_in_catch")          \
	X(RAISE, "_ZN3dlx5raiseEi")                    \
	X(DESCEND, "_ZN3dlx7descendEii")               \
	X(GUARDED, "_ZN3dlx7guardedEii")               \
	X(WALK, "_ZN3dlx4walkEiiPcm")                  \
	X(BLOCK, "_ZN3dlx5blockEii")

enum dlx_func {
#define AS_ENUM(id, name) F_##id,
	DLX_FUNCS(AS_ENUM)
#undef AS_ENUM
	F_NR
};

static const char *const func_names[F_NR] = {
#define AS_NAME(id, name) name,
	DLX_FUNCS(AS_NAME)
#undef AS_NAME
};

static unsigned long calls[F_NR], unwound[F_NR], open_calls[F_NR];

/* Counted at entry: whether the call will end by unwinding is known by design. */
static void enter(enum dlx_func f, bool unwinds)
{
	__atomic_add_fetch(&calls[f], 1, __ATOMIC_RELAXED);
	if (unwinds)
		__atomic_add_fetch(&unwound[f], 1, __ATOMIC_RELAXED);
}

/* A call that never ends: the process exits inside it. */
static void enter_open(enum dlx_func f)
{
	__atomic_add_fetch(&calls[f], 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&open_calls[f], 1, __ATOMIC_RELAXED);
}

/* Calls through volatile pointers are neither inlined nor turned into tail calls or loops. */
static int (*volatile descend_again)(int, int) = dlx::descend;
static int (*volatile walk_again)(int, int, char *, size_t) = dlx::walk;
static void (*volatile block_again)(int, int) = dlx::block;
static int (*volatile throw_from)(int, int) = dlx_throw;

#define NOINLINE __attribute__((noinline))

/* ---- the cleanup log: destructors and handlers of the forced unwinding ---- */

static char cleanup_log[512];

static void log_cleanup(const char *what)
{
	size_t len = strlen(cleanup_log);

	snprintf(cleanup_log + len, sizeof(cleanup_log) - len, "%s%s", len ? " " : "", what);
}

const char *dlx_cleanup_log(void)
{
	static char copy[sizeof(cleanup_log)];

	memcpy(copy, cleanup_log, sizeof(copy));
	cleanup_log[0] = '\0';
	return copy;
}

namespace {
/* A frame with a destructor: the unwinder must stop at it to run the cleanup. */
struct frame_guard {
	char what[32];
	frame_guard(const char *fn, int n) { snprintf(what, sizeof(what), "~%s(%d)", fn, n); }
	~frame_guard() { log_cleanup(what); }
};
}

namespace dlx {

error::error(int code_, const char *where) : std::runtime_error(where), code(code_) {}

error::~error() = default;

NOINLINE void raise(int code)
{
	enter(F_RAISE, true);
	throw error(code, "dlx::raise");
}

/* n frames of descend, then raise. */
NOINLINE int descend(int n, int code)
{
	enter(F_DESCEND, true);
	if (n <= 1)
		raise(code);
	return 1 + descend_again(n - 1, code);
}

/* A thrown-through frame with a landing pad (a cleanup), unlike descend. */
NOINLINE int guarded(int depth, int code)
{
	frame_guard g("guarded", depth);

	enter(F_GUARDED, true);
	return 1 + throw_from(depth, code);
}

static int count_names(void *const *frames, int n, char *names, size_t names_sz)
{
	size_t len = 0;

	names[0] = '\0';
	for (int i = 0; i < n && len < names_sz; i++) {
		Dl_info info = {};
		const char *name = dladdr(frames[i], &info) && info.dli_sname ? info.dli_sname : "?";

		len += snprintf(names + len, names_sz - len, "%s%s", i ? " " : "", name);
	}
	return n;
}

struct unwind_state {
	void *frames[64];
	int n;
};

static _Unwind_Reason_Code unwind_one(struct _Unwind_Context *ctx, void *arg)
{
	auto *st = static_cast<unwind_state *>(arg);

	if (st->n == 64)
		return _URC_END_OF_STACK;
	st->frames[st->n++] = (void *)_Unwind_GetIP(ctx);
	return _URC_NO_REASON;
}

/* n frames of walk, then the innermost one takes the backtrace (how 0: glibc, 1: libgcc). */
NOINLINE int walk(int n, int how, char *names, size_t names_sz)
{
	enter(F_WALK, false);
	if (n <= 1) {
		if (how == 0) {
			void *frames[64];

			return count_names(frames, backtrace(frames, 64), names, names_sz);
		}
		unwind_state st = {};

		_Unwind_Backtrace(unwind_one, &st);
		return count_names(st.frames, st.n, names, names_sz);
	}
	int r = walk_again(n - 1, how, names, names_sz);

	__asm__ volatile("" ::: "memory");
	return r;
}

/* Who to tell that the innermost frame of block is reached (one blocked thread at a time). */
static void (*block_ready)(void);

/* n frames, each with a destructor; the innermost waits to be cancelled (how 0) or exits (how 1). */
NOINLINE void block(int n, int how)
{
	frame_guard g("block", n);

	enter(F_BLOCK, true);
	if (n > 1) {
		block_again(n - 1, how);
		__asm__ volatile("" ::: "memory");
		return;
	}
	block_ready();
	if (how == 1)
		pthread_exit((void *)42);
	for (;;)
		pause();	/* a cancellation point */
}

} // namespace dlx

extern "C" {

NOINLINE int dlx_throw(int depth, int code)
{
	enter(F_THROW, true);
	if (depth <= 1)
		throw dlx::error(code, "dlx_throw");
	if (depth == 2)
		dlx::raise(code);
	return 1 + descend_again(depth - 2, code);
}

NOINLINE int dlx_catch_inside(int depth)
{
	enter(F_CATCH_INSIDE, false);
	try {
		return throw_from(depth, depth);
	} catch (const dlx::error &e) {
		return e.code;
	}
}

NOINLINE int dlx_rethrow(int depth)
{
	enter(F_RETHROW, true);
	try {
		return throw_from(depth, depth);
	} catch (const dlx::error &) {
		throw;
	}
}

NOINLINE int dlx_catch_rethrown(int depth)
{
	enter(F_CATCH_RETHROWN, false);
	try {
		return dlx_rethrow(depth);
	} catch (const dlx::error &e) {
		return e.code;
	}
}

NOINLINE int dlx_translate(int depth)
{
	enter(F_TRANSLATE, true);
	try {
		return throw_from(depth, 9);
	} catch (const dlx::error &e) {
		throw std::logic_error("translated dlx::error");
	}
}

NOINLINE int dlx_nested(int depth)
{
	int r = 0;

	enter(F_NESTED, false);
	try {
		try {
			r = throw_from(depth, 7);
		} catch (const std::out_of_range &) {	/* not this one: the outer block's */
			r = -1000;
		}
		r = -2000;
	} catch (const dlx::error &e) {
		r += e.code;
		try {
			r += dlx::guarded(depth, 8);
		} catch (const dlx::error &e2) {
			r += e2.code;
		}
	}
	try {
		r += dlx_translate(depth);
	} catch (const std::logic_error &) {
		r += 100;
	}
	return r;
}

NOINLINE int dlx_backtrace(int depth, char *names, size_t names_sz)
{
	enter(F_BACKTRACE, false);
	int r = walk_again(depth, 0, names, names_sz);

	__asm__ volatile("" ::: "memory");
	return r;
}

NOINLINE int dlx_unwind_backtrace(int depth, char *names, size_t names_sz)
{
	enter(F_UNWIND_BACKTRACE, false);
	int r = walk_again(depth, 1, names, names_sz);

	__asm__ volatile("" ::: "memory");
	return r;
}

static void cleanup_handler(void *what)
{
	log_cleanup(static_cast<const char *>(what));
}

static void *block_in(void *arg, int how, const char *handler)
{
	auto *a = static_cast<struct dlx_thread_arg *>(arg);

	dlx::block_ready = a->ready;
	pthread_cleanup_push(cleanup_handler, const_cast<char *>(handler));
	block_again(a->depth, how);
	pthread_cleanup_pop(0);
	return NULL;
}

NOINLINE void *dlx_cleanup_cancel(void *arg)
{
	enter(F_CLEANUP_CANCEL, true);
	void *r = block_in(arg, 0, "handler(dlx_cleanup_cancel)");

	__asm__ volatile("" ::: "memory");
	return r;
}

NOINLINE void *dlx_cleanup_exit(void *arg)
{
	enter(F_CLEANUP_EXIT, true);
	void *r = block_in(arg, 1, "handler(dlx_cleanup_exit)");

	__asm__ volatile("" ::: "memory");
	return r;
}

NOINLINE void dlx_exit_in_catch(int depth, int how, void (*before_exit)(void))
{
	frame_guard g("exit_in_catch", depth);

	if (how == 1)
		enter_open(F_EXIT_IN_CATCH);
	else
		enter(F_EXIT_IN_CATCH, true);
	try {
		throw_from(depth, depth);
	} catch (const dlx::error &e) {
		if (how == 0)
			pthread_exit((void *)(long)(42 + e.code - depth));
		before_exit();
		exit(0);
	}
	abort();	/* dlx_throw always throws */
}

int dlx_report(void)
{
	int err = 0;

	for (int f = 0; f < F_NR; f++) {
		if (!dlsym(RTLD_DEFAULT, func_names[f])) {
			fprintf(stderr, "dlcxx: %s is not an exported symbol\n", func_names[f]);
			err = -1;
		}
		printf("calls %s %lu\n", func_names[f], __atomic_load_n(&calls[f], __ATOMIC_RELAXED));
		printf("unwound %s %lu\n", func_names[f], __atomic_load_n(&unwound[f], __ATOMIC_RELAXED));
		printf("open %s %lu\n", func_names[f], __atomic_load_n(&open_calls[f], __ATOMIC_RELAXED));
	}
	return err;
}

} // extern "C"
