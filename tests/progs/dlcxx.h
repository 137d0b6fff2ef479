/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A C++ library whose calls leave by exceptions and forced unwinding: the
 * workload of the unwinding tests. Each function is a frame an unwinder must
 * walk through while the profiler's return probes sit on it.
 */
#ifndef DLCXX_H
#define DLCXX_H

#include <stddef.h>

#ifdef __cplusplus
#include <stdexcept>

namespace dlx {
/* What the library throws; defined in the library, caught by the driver too. */
class error : public std::runtime_error {
public:
	error(int code, const char *where);
	~error() override;
	int code;
};
[[noreturn]] void raise(int code);
int descend(int n, int code);
int guarded(int depth, int code);
int walk(int n, int how, char *names, size_t names_sz);
void block(int n, int how);
}

extern "C" {
#endif

/* Throws dlx::error(code) through depth library frames (depth >= 1). */
int dlx_throw(int depth, int code);
/* Calls dlx_throw(depth) and catches inside the library: returns the code. */
int dlx_catch_inside(int depth);
/* Catches dlx_throw(depth)'s exception and rethrows it with `throw;`. */
int dlx_rethrow(int depth);
/* Calls dlx_rethrow(depth) and catches the rethrown exception: returns normally. */
int dlx_catch_rethrown(int depth);
/* Catches dlx_throw(depth)'s exception and throws a std::logic_error instead. */
int dlx_translate(int depth);
/* Nested try blocks, a try inside a handler, a translated exception: returns 115. */
int dlx_nested(int depth);
/* glibc backtrace() from depth library frames: the frame count, names into names. */
int dlx_backtrace(int depth, char *names, size_t names_sz);
/* The same with libgcc's _Unwind_Backtrace. */
int dlx_unwind_backtrace(int depth, char *names, size_t names_sz);

/* Argument of the thread functions below. */
struct dlx_thread_arg {
	int depth;
	void (*ready)(void);	/* called from the innermost frame before it blocks */
};
/* Pushes a cleanup handler, descends depth frames (each with a destructor)
 * and blocks in pause() until cancelled. Never returns. */
void *dlx_cleanup_cancel(void *arg);
/* The same, but the innermost frame calls pthread_exit((void *)42). */
void *dlx_cleanup_exit(void *arg);
/* Catches dlx_throw(depth)'s exception and leaves from the handler, with a
 * destructor in its frame: ends the thread with pthread_exit((void *)42)
 * (how 0: a forced unwind through the handler), or calls before_exit and
 * ends the process with exit(0) (how 1). Never returns. */
__attribute__((noreturn)) void dlx_exit_in_catch(int depth, int how, void (*before_exit)(void));
/* What destructors and cleanup handlers ran, in order, since the last call. */
const char *dlx_cleanup_log(void);

/* The oracle: prints "calls NAME N", "unwound NAME N" and "open NAME N" for
 * every function above, by its symbol name (calls it made, calls left by an
 * exception or a forced unwinding, calls the process exited inside of);
 * returns -1 if a name is not the exported symbol. */
int dlx_report(void);

#ifdef __cplusplus
}
#endif

#endif
