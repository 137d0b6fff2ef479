// SPDX-License-Identifier: GPL-2.0-only
/* What the probe table left out or counts at entry only, said library by library at the start. */
#include <stddef.h>
#include <stdio.h>

#include "cmd/table_notes.h"
#include "probe/probe_table.h"
#include "util/messages.h"

/* "a callback (12), a cancellation point (3) or an unwinder (1)": what the entry-only ones reach. */
static void unwind_risks_text(const struct probe_lib *lib, char *buf, size_t sz)
{
	size_t off = 0, left = 0;

	buf[0] = '\0';
	for (int r = UNWIND_RISK_NONE + 1; r < UNWIND_RISK_NR; r++)
		left += lib->unwind_risks[r] > 0;
	/* The most telling first: the risks rise in that order. */
	for (int r = UNWIND_RISK_NR - 1; r > UNWIND_RISK_NONE && off < sz; r--) {
		if (!lib->unwind_risks[r])
			continue;
		left--;
		off += (size_t)snprintf(buf + off, sz - off, "%s%s (%zu)", off ? (left ? ", " : " or ") : "",
					unwind_risk_name(r), lib->unwind_risks[r]);
	}
}

/* The name of the library's first function timed on the analysis's word. */
static const char *first_timed(const struct probe_table *t, const struct probe_lib *lib)
{
	for (size_t k = lib->first_func; k < lib->first_func + lib->nr_funcs; k++)
		if (t->funcs[k].unwind_judged && t->funcs[k].entry_only == ENTRY_ONLY_NO)
			return t->funcs[k].demangled ?: t->funcs[k].name;
	return "?";
}

/*
 * One line per library unwinding may cross, where nothing repairs the
 * stack: how many functions are timed and how many counted at entry only,
 * and why (docs/live-mode.md, "Unwinding"); -v names each entry-only one.
 */
static void note_unwinding(const struct probe_table *t, const struct probe_lib *lib, int verbose)
{
	size_t all = lib->nr_unwind_timed + lib->nr_unwind_entry_only;
	char risks[256];

	for (size_t k = lib->first_func; k < lib->first_func + lib->nr_funcs && verbose; k++)
		if (t->funcs[k].entry_only == ENTRY_ONLY_UNWINDING && t->funcs[k].unwind_why)
			errmsg("note: %s in %s counted at entry only: it %s", t->funcs[k].demangled ?: t->funcs[k].name,
			       lib->file->display, t->funcs[k].unwind_why);
	if (!all)
		return;
	unwind_risks_text(lib, risks, sizeof(risks));
	if (!lib->nr_unwind_timed && !risks[0])	/* the analysis could not read the library */
		errmsg("note: %zu functions of %s counted at entry only, never timed: exceptions or thread "
		       "cancellation may unwind through them, and this kernel lets no probe repair the stack "
		       "for that (it needs CAP_SYS_ADMIN and no lockdown); --unwind unsafe times them at that "
		       "risk", lib->nr_unwind_entry_only, lib->file->display);
	else if (all == 1 && !lib->nr_unwind_entry_only)
		errmsg("note: %s: %s timed although this kernel lets no probe repair the stack for unwinders: "
		       "nothing it reaches can unwind through it", lib->file->display, first_timed(t, lib));
	else if (!lib->nr_unwind_entry_only)
		errmsg("note: %s: all %zu functions timed although this kernel lets no probe repair the stack for "
		       "unwinders: nothing they reach can unwind through them", lib->file->display, all);
	else
		errmsg("note: %s: %zu of %zu functions timed, nothing they reach can unwind through them; %zu "
		       "counted at entry only, never timed: they reach %s, from which an exception, a "
		       "cancellation or a backtrace could unwind through them, and this kernel lets no probe "
		       "repair the stack (it needs CAP_SYS_ADMIN and no lockdown); --unwind unsafe times them at "
		       "that risk%s", lib->file->display, lib->nr_unwind_timed, all, lib->nr_unwind_entry_only,
		       risks, verbose ? "" : " (-v lists them)");
}

/* --boundary: what it left out, said as a note, not a warning: the user asked for it. */
static void note_not_imported(const struct probe_table *t, const struct probe_lib *lib, int verbose)
{
	for (size_t k = 0; k < lib->nr_not_imported && verbose; k++)
		errmsg("note: %s in %s left out: no other module of the target imports it",
		       lib->not_imported[k], lib->file->display);
	if (lib->nr_not_imported && !verbose)
		errmsg("note: --boundary: %zu of %zu functions of %s probed, those the target's modules import "
		       "(%zu read); %zu left out, imported by none (-v lists them)",
		       lib->nr_funcs, lib->nr_funcs + lib->nr_not_imported, lib->file->display,
		       t->boundary_modules, lib->nr_not_imported);
}

void table_notes_print(const struct probe_table *t, int verbose)
{
	for (size_t i = 0; i < t->nr_libs; i++) {
		const struct probe_lib *lib = &t->libs[i];

		note_not_imported(t, lib, verbose);
		if (lib->ifunc_unresolved)
			warnmsg("%zu IFUNC function%s of %s left out: no implementation inside the library",
			       lib->ifunc_unresolved, lib->ifunc_unresolved == 1 ? "" : "s", lib->file->display);
		for (size_t k = 0; k < lib->nr_unprobeable && verbose; k++)
			warnmsg("%s in %s left out: no instruction near its entry can take a uprobe",
			       lib->unprobeable[k], lib->file->display);
		if (lib->nr_unprobeable && !verbose)
			warnmsg("%zu function%s of %s left out: no instruction near the entry can take a uprobe (-v lists them)",
			       lib->nr_unprobeable, lib->nr_unprobeable == 1 ? "" : "s", lib->file->display);
		for (size_t k = 0; k < lib->nr_entry_only && verbose; k++)
			errmsg("note: %s in %s counted at entry only: it keeps its own return address",
			       lib->entry_only[k], lib->file->display);
		if (lib->nr_entry_only && !verbose)
			errmsg("note: %zu function%s of %s counted at entry only, never timed: %s own return "
			       "address, which a return probe would break (-v lists them)", lib->nr_entry_only,
			       lib->nr_entry_only == 1 ? "" : "s", lib->file->display,
			       lib->nr_entry_only == 1 ? "it keeps its" : "they keep their");
		note_unwinding(t, lib, verbose);
	}
}
