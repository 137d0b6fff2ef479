/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What a profile probes: the library files --lib names and the functions
 * of each that --func/--exclude keep. A function's id (its index here) is
 * the BPF cookie of its probes.
 */
#ifndef DLPROF_PROBE_TABLE_H
#define DLPROF_PROBE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/str_list.h"
#include "model/func_summary.h"
#include "elf/lib_resolve.h"
#include "elf/unwind_safety.h"

/* What to probe, as any front end states it. The lists are borrowed. */
struct probe_selection {
	struct str_list libs;		/* paths, sonames or globs */
	struct str_list funcs;		/* include globs (none: every function) */
	struct str_list excludes;
	bool placement_entry;		/* probes stay on the entry unless it cannot take one */
	bool no_demangle;		/* --no-demangle: globs see and rows carry the symbols only */
	/*
	 * Only the functions some other module of the target imports: the
	 * calls that enter a library from outside, not those it makes to
	 * itself (docs/live-mode.md). The target is the pid, else program.
	 */
	bool boundary;
	size_t max_functions;		/* more selected is refused (-E2BIG); 0: PROBE_TABLE_MAX_FUNCTIONS */
	/*
	 * A command about to be launched: its DT_RPATH/DT_RUNPATH count for
	 * the names it will load (lib_resolve_program); NULL: none (a -p
	 * process's own executable counts without it).
	 */
	const char *program;
};

/*
 * A profile of every function of hundreds of libraries (--lib 'lib*')
 * takes memory, attach and detach time in proportion: beyond this many,
 * the caller must ask for them.
 */
#define PROBE_TABLE_MAX_FUNCTIONS 20000

struct probe_lib {
	const struct lib_file *file;	/* in probe_table.files */
	char build_id[41];
	size_t first_func;		/* this library's functions are funcs[first_func, first_func+nr_funcs) */
	size_t nr_funcs;
	size_t ifunc_unresolved;	/* selected IFUNCs left out: their implementation could not be found */
	char **ifunc_unresolved_names;	/* their names, ifunc_unresolved of them */
	size_t moved;			/* entry probes placed past the entry (docs/probe-placement.md) */
	char **unprobeable;		/* functions left out: no instruction near the entry takes a uprobe */
	size_t nr_unprobeable;
	char **not_imported;		/* boundary: functions the globs select that no other module imports */
	size_t nr_not_imported;
	char **entry_only;		/* functions that keep their return address: counted, not timed */
	size_t nr_entry_only;
	size_t nr_unwind_entry_only;	/* counted at entry only: unwinding may cross them, and nothing repairs it */
	/*
	 * Of a library unwinding may cross, with nothing to repair it: the
	 * functions its code shows no unwinder can cross, timed (unwind_safety.h),
	 * and the functions judged by what they reach (UNWIND_RISK_NONE: the
	 * timed ones). All 0 when the analysis could not read the library
	 * (then all are counted at entry only).
	 */
	size_t nr_unwind_timed;
	size_t unwind_risks[UNWIND_RISK_NR];
};

struct probe_func {
	char *name;			/* the symbol (mangled) */
	char *demangled;		/* elf/demangle.h's reading of it; NULL: none, or --no-demangle */
	size_t lib;			/* index into libs */
	uint64_t offset;		/* file offset of the probes (the entry's, or past it when moved) */
	uint32_t moved;			/* bytes the probes sit past the symbol's entry; 0: at the entry */
	enum entry_only_why entry_only;	/* no return probe, and why */
	bool stepped;			/* the probed instruction is single-stepped, not emulated */
	bool unwind_judged;		/* its library's code was read for what could unwind through it */
	enum unwind_risk unwind_risk;	/* what it found; UNWIND_RISK_NONE: the function is timed */
	char *unwind_why;		/* for an entry-only one: the call that makes it so, in words */
};

struct probe_table {
	struct lib_list files;
	size_t boundary_modules;	/* boundary: the target's modules whose imports were read */
	struct probe_lib *libs;
	size_t nr_libs;
	struct probe_func *funcs;
	size_t nr_funcs;
	uint64_t *offsets;		/* nr_funcs, as the attacher wants them */
	uint64_t *cookies;		/* the id, DLPROF_COOKIE_ENTRY_ONLY and _STEPPED (include/dlprof.h) */
};

/*
 * Resolve opts->libs (for pid when > 0), read their symbols and keep the
 * functions the globs select. Returns 0, or -errno with a one-line message
 * in err: a library not found (and where it was looked for), a file that is
 * not ELF, no function matched.
 */
enum probe_table_flags {
	/*
	 * The unwinder's return addresses cannot be repaired (unwind_hooks.h):
	 * in the libraries unwinding may cross, a return probe only on the
	 * functions whose code shows that nothing they reach can start an
	 * unwind (elf/unwind_safety.h).
	 */
	PROBE_TABLE_NO_UNWIND_FIX = 1 << 0,
};

int probe_table__build(struct probe_table *t, const struct probe_selection *opts, pid_t pid,
		       unsigned int flags, char *err, size_t err_sz);
void probe_table__free(struct probe_table *t);

/*
 * Whether a function named by these names passes the include/exclude globs:
 * a glob matches when it matches a symbol or (unless opts->no_demangle) its
 * demangled form.
 */
int probe_table_selects(const struct probe_selection *opts, const char *name, char *const *aliases);

#endif /* DLPROF_PROBE_TABLE_H */
