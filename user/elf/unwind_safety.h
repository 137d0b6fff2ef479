/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which functions of a library no unwinder can cross. An unwinder (a C++
 * throw, thread cancellation, pthread_exit, backtrace()) crosses a frame
 * only when it starts below it: from code the function reaches while it
 * runs. A return probe leaves the kernel's trampoline in the frame's
 * return slot, where no unwind table knows it, so a function whose
 * reachable code can start none of them can be timed even where nothing
 * repairs the stack (docs/live-mode.md, "Unwinding").
 *
 * The analysis follows the library's code from each function's entry
 * (x86-64, capstone): jumps and calls inside the library, its own PLT and
 * GOT, the implementations an IFUNC resolver may pick. A function is at
 * risk when anything it reaches calls or jumps through a pointer it cannot
 * resolve (a callback), calls a cancellation point or an unwinder by name,
 * calls into another library (except the few leaves of unwind_safety.c's
 * table), or leaves code the disassembler cannot follow.
 */
#ifndef DLPROF_UNWIND_SAFETY_H
#define DLPROF_UNWIND_SAFETY_H

#include <stddef.h>
#include <stdint.h>

/* What a function reaches that could unwind through it; in rising order of what a report names first. */
enum unwind_risk {
	UNWIND_RISK_NONE = 0,	/* nothing: a return probe is safe without the stack repair */
	UNWIND_RISK_UNKNOWN,	/* code the analysis cannot follow (undecodable, out of bounds, a switch it cannot bound) */
	UNWIND_RISK_IMPORT,	/* a function of another library, which it cannot see into */
	UNWIND_RISK_CALLBACK,	/* a call or jump through a pointer: qsort's comparator, a vtable, a hook */
	UNWIND_RISK_CANCEL,	/* a thread-cancellation point */
	UNWIND_RISK_UNWINDER,	/* a function that throws or unwinds: __cxa_throw, _Unwind_*, pthread_exit, backtrace */
	UNWIND_RISK_NR
};

/* "callback", "cancellation point", ...: what a note or a listing names. */
const char *unwind_risk_name(enum unwind_risk r);

struct code_image;
struct unwind_scan;

/*
 * A scan of the library ci describes (borrowed: it must outlive the
 * scan). Returns 0, -ENOMEM, or -EOPNOTSUPP where the disassembler
 * cannot run.
 */
int unwind_scan__new(const struct code_image *ci, struct unwind_scan **out);
void unwind_scan__free(struct unwind_scan *u);

/*
 * The risk of each function whose entry is entries[i] (virtual addresses;
 * for an IFUNC, the implementation that is probed), into risks[i]. All
 * are judged together: the code they share is read once. Returns 0 or
 * -ENOMEM.
 */
int unwind_scan__judge(struct unwind_scan *u, const uint64_t *entries, size_t n, enum unwind_risk *risks);

/*
 * The risk of a call to the IFUNC whose resolver is at resolver: the
 * highest of the implementations it may return. Returns 0 or -ENOMEM.
 */
int unwind_scan__judge_ifunc(struct unwind_scan *u, uint64_t resolver, enum unwind_risk *risk);

/*
 * What makes the function at entry (judged before) unsafe, in words for a
 * listing ("calls read, a cancellation point"; "an indirect call at
 * 0x3ffd4 (in qsort)"); "" when nothing does.
 */
void unwind_scan__why(const struct unwind_scan *u, uint64_t entry, char *buf, size_t sz);

/*
 * The imports the analysis takes as safe without seeing their code, by
 * index (NULL past the last): for a test that checks each against the
 * system's libc.
 */
const char *unwind_safe_import(size_t i);

#endif /* DLPROF_UNWIND_SAFETY_H */
