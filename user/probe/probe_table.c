// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dlprof.h"
#include "elf/demangle.h"
#include "elf/elf_symbols.h"
#include "util/file_io.h"
#include "elf/probe_placement.h"
#include "probe/probe_table.h"
#include "elf/import_set.h"
#include "util/array.h"
#include "elf/code_image.h"
#include "elf/return_capture.h"
#include "elf/unwind_safety.h"

static int any_name_matches(const char *pattern, char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !fnmatch(pattern, names[i], 0))
			return 1;
	return 0;
}

static int selects_names(const struct probe_selection *opts, char *const *names, size_t n)
{
	int keep = !opts->funcs.cnt;

	for (size_t i = 0; i < opts->funcs.cnt && !keep; i++)
		keep = any_name_matches(opts->funcs.items[i], names, n);
	for (size_t i = 0; i < opts->excludes.cnt && keep; i++)
		keep = !any_name_matches(opts->excludes.items[i], names, n);
	return keep;
}

int probe_table_selects(const struct probe_selection *opts, const char *name, char *const *aliases)
{
	size_t nr_aliases = 0, n;
	char **names;
	int keep;

	while (aliases && aliases[nr_aliases])
		nr_aliases++;
	if (!opts->funcs.cnt && !opts->excludes.cnt)
		return 1;
	/* The symbols, then their demangled forms (NULL where a name does not demangle). */
	n = (nr_aliases + 1) * (opts->no_demangle ? 1 : 2);
	names = calloc(n, sizeof(*names));
	if (!names)	/* out of memory: the symbol alone still selects */
		return selects_names(opts, (char *[]){ (char *)name }, 1);
	names[0] = (char *)name;
	for (size_t i = 0; i < nr_aliases; i++)
		names[1 + i] = aliases[i];
	for (size_t i = nr_aliases + 1; i < n; i++)
		names[i] = demangle(names[i - nr_aliases - 1]);
	keep = selects_names(opts, names, n);
	for (size_t i = nr_aliases + 1; i < n; i++)
		free(names[i]);
	free(names);
	return keep;
}

/*
 * A library file's bytes, for the disassembler. Read, never mapped: the
 * kernel writes other tools' uprobe breakpoints into every new executable
 * mapping of a probed file, a private read-only one included, while the
 * page cache that read() sees never holds them.
 */
struct lib_image {
	uint8_t *base;
	size_t size;
};

static int lib_image_read(struct lib_image *img, const char *path)
{
	struct stat st;
	int fd, ret;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0) {
		ret = -ENOEXEC;
		goto cleanup;
	}
	img->base = malloc((size_t)st.st_size);
	if (!img->base) {
		ret = -ENOMEM;
		goto cleanup;
	}
	img->size = (size_t)st.st_size;
	ret = pread_full(fd, img->base, img->size, 0);
	if (ret >= 0)
		ret = ret ? 0 : -EIO;	/* cut short while read */
cleanup:
	close(fd);
	return ret;
}

static void lib_image_free(struct lib_image *img)
{
	free(img->base);
	img->base = NULL;
}

/*
 * Where f's entry probe goes. A function the placement cannot judge (no
 * bytes in the file, a host it does not know) stays at its entry; one that
 * no nearby instruction can carry is left out (-ENOENT).
 */
static int place_func(const struct probe_selection *opts, const struct elf_func *f,
		      const struct lib_image *img, const uint64_t *starts, size_t nr_starts,
		      uint64_t *offset, bool *stepped)
{
	struct placement_func fn = { .size = f->size, .file_offset = f->file_offset };
	struct placement pl;
	int err;

	*offset = f->file_offset;
	*stepped = false;
	if (f->file_offset >= img->size)
		return 0;
	fn.code = img->base + f->file_offset;
	fn.len = img->size - f->file_offset;
	err = probe_place(&fn, starts, nr_starts, &pl);
	if (err)
		return 0;
	if (pl.kind == PLACE_UNPROBEABLE)
		return -ENOENT;
	/* --placement entry: move only off an entry the kernel refuses. */
	if (pl.kind == PLACE_MOVED && (!opts->placement_entry || !uprobe_insn_probeable(pl.entry_class)))
		*offset = pl.offset;
	/* The latency compensation charges each probe the cost of its class. */
	*stepped = *offset == pl.offset ? !pl.emulated : pl.entry_class != UPROBE_INSN_EMULATED;
	return 0;
}

/* Would a return probe on f be taken for the return address it keeps? */
static bool keeps_return_address(const struct elf_func *f, const struct lib_image *img)
{
	if (return_capture_by_name(f->name))
		return true;
	for (size_t i = 0; f->aliases && f->aliases[i]; i++)
		if (return_capture_by_name(f->aliases[i]))
			return true;
	return return_capture_by_code(img->base, img->size, f->file_offset, f->size);
}

static int add_name(char ***names, size_t *cnt, const char *name)
{
	char **slot = ARRAY_SLOT(*names, *cnt);

	if (!slot)
		return -ENOMEM;
	*slot = strdup(name);
	if (!*slot)
		return -ENOMEM;
	(*cnt)++;
	return 0;
}

/*
 * The library's functions counted at entry only because unwinding may
 * cross them (funcs[first, first + n), entries their entry addresses):
 * those whose code shows nothing they reach can start an unwind get their
 * return probe back. Where the code cannot be read, all stay at entry
 * only. Returns 0 or -ENOMEM.
 */
static int judge_unwinding(struct probe_func *funcs, size_t n, const uint64_t *entries, struct probe_lib *lib,
			   const struct lib_image *img)
{
	enum unwind_risk *risks = calloc(n + 1, sizeof(*risks));
	struct code_image *ci = NULL;
	struct unwind_scan *u = NULL;
	char why[256];
	int err;

	err = risks ? code_image__new(img->base, img->size, &ci) : -ENOMEM;
	if (!err)
		err = unwind_scan__new(ci, &u);
	if (!err)
		err = unwind_scan__judge(u, entries, n, risks);
	for (size_t i = 0; i < n && !err; i++) {
		struct probe_func *pf = &funcs[i];

		if (pf->entry_only != ENTRY_ONLY_UNWINDING)
			continue;
		pf->unwind_judged = true;
		pf->unwind_risk = risks[i];
		lib->unwind_risks[risks[i]]++;
		if (risks[i] == UNWIND_RISK_NONE) {
			pf->entry_only = ENTRY_ONLY_NO;
			lib->nr_unwind_entry_only--;
			lib->nr_unwind_timed++;
			continue;
		}
		unwind_scan__why(u, entries[i], why, sizeof(why));
		pf->unwind_why = strdup(why);
		if (!pf->unwind_why)
			err = -ENOMEM;
	}
	unwind_scan__free(u);
	code_image__free(ci);
	free(risks);
	/* Code the analysis cannot read leaves every function at entry only, as without it. */
	return err == -ENOMEM ? err : 0;
}

/* unwound_unfixed: unwinding may cross the library, and nothing repairs it. */
/* Whether another module imports f by one of its names. */
static bool func_imported(const struct import_set *imports, const struct elf_func *f)
{
	if (import_set__has(imports, f->name))
		return true;
	for (size_t a = 0; f->aliases && f->aliases[a]; a++)
		if (import_set__has(imports, f->aliases[a]))
			return true;
	return false;
}

static int add_lib_funcs(struct probe_table *t, size_t lib_idx, const struct elf_func_list *elf,
			 const struct lib_image *img, const struct probe_selection *opts,
			 const struct import_set *imports, bool unwound_unfixed)
{
	struct probe_lib *lib = &t->libs[lib_idx];
	uint64_t *starts = NULL, *entries = NULL;
	struct probe_func *funcs;
	size_t n = 0;
	int err = 0;

	funcs = realloc(t->funcs, (t->nr_funcs + elf->cnt + 1) * sizeof(*funcs));
	starts = malloc((elf->cnt + 1) * sizeof(*starts));
	entries = malloc((elf->cnt + 1) * sizeof(*entries));
	if (funcs)
		t->funcs = funcs;
	if (!funcs || !starts || !entries) {
		free(starts);
		free(entries);
		return -ENOMEM;
	}
	/* elf->funcs is sorted by offset: so are the starts the placement checks against. */
	for (size_t i = 0; i < elf->cnt; i++)
		starts[i] = elf->funcs[i].file_offset;
	for (size_t i = 0; i < elf->cnt && !err; i++) {
		const struct elf_func *f = &elf->funcs[i];
		struct probe_func *pf = &t->funcs[t->nr_funcs + n];
		uint64_t offset;
		bool stepped;

		if (!probe_table_selects(opts, f->name, f->aliases))
			continue;
		if (imports && !func_imported(imports, f)) {
			err = add_name(&lib->not_imported, &lib->nr_not_imported, f->name);
			continue;
		}
		if (place_func(opts, f, img, starts, elf->cnt, &offset, &stepped)) {
			err = add_name(&lib->unprobeable, &lib->nr_unprobeable, f->name);
			continue;
		}
		*pf = (struct probe_func){ .name = strdup(f->name) };
		if (!pf->name) {
			err = -ENOMEM;
			break;
		}
		pf->demangled = opts->no_demangle ? NULL : demangle(f->name);
		pf->lib = lib_idx;
		pf->offset = offset;
		pf->moved = (uint32_t)(offset - f->file_offset);
		pf->stepped = stepped;
		pf->entry_only = ENTRY_ONLY_NO;
		if (keeps_return_address(f, img)) {
			pf->entry_only = ENTRY_ONLY_RETURN_ADDRESS;
			err = add_name(&lib->entry_only, &lib->nr_entry_only, f->name);
		} else if (unwound_unfixed) {
			pf->entry_only = ENTRY_ONLY_UNWINDING;
			lib->nr_unwind_entry_only++;
		}
		lib->moved += offset != f->file_offset;
		entries[n++] = f->vaddr;
	}
	free(starts);
	lib->first_func = t->nr_funcs;
	lib->nr_funcs = n;
	t->nr_funcs += n;
	if (!err && lib->nr_unwind_entry_only)
		err = judge_unwinding(t->funcs + lib->first_func, n, entries, lib, img);
	free(entries);
	return err;
}

static void names_free(char **names, size_t cnt)
{
	for (size_t i = 0; i < cnt; i++)
		free(names[i]);
	free(names);
}

/* The names of the IFUNCs the globs select, before resolution moves or drops them. */
static int selected_ifuncs(const struct elf_func_list *elf, const struct probe_selection *opts,
			   char ***out, size_t *cnt)
{
	char **names = NULL;
	int err = 0;

	*cnt = 0;
	for (size_t i = 0; i < elf->cnt && !err; i++) {
		const struct elf_func *f = &elf->funcs[i];

		if ((f->flags & ELF_FUNC_IFUNC) && probe_table_selects(opts, f->name, f->aliases))
			err = add_name(&names, cnt, f->name);
	}
	if (err) {
		names_free(names, *cnt);
		*cnt = 0;
		return err;
	}
	*out = names;
	return 0;
}

/* The names no function of elf carries any more: the selected IFUNCs left out. */
static int names_missing(const struct elf_func_list *elf, char **names, size_t cnt, char ***out, size_t *missing)
{
	int err = 0;

	for (size_t k = 0; k < cnt && !err; k++) {
		bool found = false;

		for (size_t i = 0; i < elf->cnt && !found; i++) {
			const struct elf_func *f = &elf->funcs[i];

			found = !strcmp(f->name, names[k]);
			for (size_t a = 0; !found && f->aliases && f->aliases[a]; a++)
				found = !strcmp(f->aliases[a], names[k]);
		}
		if (!found)
			err = add_name(out, missing, names[k]);
	}
	return err;
}

static int load_lib(struct probe_table *t, size_t lib_idx, const struct probe_selection *opts,
		    const struct import_set *imports, unsigned int flags, char *err, size_t err_sz)
{
	struct probe_lib *lib = &t->libs[lib_idx];
	struct elf_func_list elf = {};
	struct lib_image img = {};
	size_t nr_ifuncs = 0, unresolved;
	char **ifuncs = NULL;
	int ret;

	ret = elf_funcs__load(lib->file->path, &elf);
	if (ret == -ENOEXEC) {
		snprintf(err, err_sz, "%s is not an ELF shared library of this machine, or it is damaged",
			 lib->file->display);
		goto cleanup;
	}
	if (ret) {
		snprintf(err, err_sz, "cannot read %s: %s", lib->file->display, strerror(-ret));
		goto cleanup;
	}
	ret = selected_ifuncs(&elf, opts, &ifuncs, &nr_ifuncs);
	if (!ret)
		ret = ifunc_resolve(lib->file->path, &elf, &unresolved);
	if (ret) {
		snprintf(err, err_sz, "cannot resolve the IFUNCs of %s: %s", lib->file->display,
			 strerror(-ret));
		goto cleanup;
	}
	/* Only those the globs asked for are worth a warning. */
	if (unresolved)
		ret = names_missing(&elf, ifuncs, nr_ifuncs, &lib->ifunc_unresolved_names, &lib->ifunc_unresolved);
	if (ret) {
		snprintf(err, err_sz, "cannot resolve the IFUNCs of %s: %s", lib->file->display, strerror(-ret));
		goto cleanup;
	}
	memcpy(lib->build_id, elf.build_id, sizeof(lib->build_id));
	ret = lib_image_read(&img, lib->file->path);
	if (ret) {
		snprintf(err, err_sz, "cannot read %s: %s", lib->file->display, strerror(-ret));
		goto cleanup;
	}
	ret = add_lib_funcs(t, lib_idx, &elf, &img, opts, imports,
			    elf.can_throw && (flags & PROBE_TABLE_NO_UNWIND_FIX));
cleanup:
	names_free(ifuncs, nr_ifuncs);
	lib_image_free(&img);
	elf_funcs__free(&elf);
	return ret;
}

static void describe_globs(const struct probe_selection *opts, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < opts->funcs.cnt && off < sz; i++)
		off += (size_t)snprintf(buf + off, sz - off, "%s--func %s", i ? " " : "", opts->funcs.items[i]);
	for (size_t i = 0; i < opts->excludes.cnt && off < sz; i++)
		off += (size_t)snprintf(buf + off, sz - off, "%s--exclude %s", off ? " " : "",
					opts->excludes.items[i]);
}

/* The names the target's modules import: pid's, else the program's and the libraries it needs. */
static int boundary_imports(const struct probe_selection *opts, pid_t pid, struct import_set *imports,
			    char *err, size_t err_sz)
{
	int ret;

	if (pid > 0)
		ret = import_set__of_process(imports, pid);
	else if (opts->program)
		ret = import_set__of_program(imports, opts->program);
	else
		ret = -EINVAL;
	if (ret == -EINVAL)
		snprintf(err, err_sz, "a boundary profile needs a process or a program: it probes what their "
			 "modules import");
	else if (ret == -ESRCH)
		snprintf(err, err_sz, "process %d not found", (int)pid);
	else if (ret && pid > 0)
		snprintf(err, err_sz, "cannot read what process %d imports: %s", (int)pid, strerror(-ret));
	else if (ret)
		snprintf(err, err_sz, "cannot read what %s imports: %s", opts->program, strerror(-ret));
	return ret;
}

static int build_libs(struct probe_table *t, const struct probe_selection *opts, const struct import_set *imports,
		      unsigned int flags, char *err, size_t err_sz);

int probe_table__build(struct probe_table *t, const struct probe_selection *opts, pid_t pid,
		       unsigned int flags, char *err, size_t err_sz)
{
	struct import_set imports = {};
	char where[1024];
	int ret;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < opts->libs.cnt; i++) {
		ret = lib_resolve_program(opts->libs.items[i], pid, opts->program, &t->files, where, sizeof(where));
		if (ret == -ENOENT) {
			snprintf(err, err_sz, "library '%s' not found; looked in: %s",
				 opts->libs.items[i], where);
			return ret;
		}
		if (ret == -ENOEXEC) {
			snprintf(err, err_sz, "'%s' is not an ELF shared library", opts->libs.items[i]);
			return ret;
		}
		if (ret == -ESRCH) {
			snprintf(err, err_sz, "process %d not found", (int)pid);
			return ret;
		}
		if (ret) {
			/* where names what could not be read, e.g. a target's /proc/PID/environ. */
			snprintf(err, err_sz, "cannot resolve library '%s': %s%s%s", opts->libs.items[i],
				 where, *where ? ": " : "", strerror(-ret));
			return ret;
		}
	}
	if (opts->boundary) {
		ret = boundary_imports(opts, pid, &imports, err, err_sz);
		if (ret)
			return ret;
		t->boundary_modules = imports.nr_modules;
	}
	ret = build_libs(t, opts, opts->boundary ? &imports : NULL, flags, err, err_sz);
	import_set__free(&imports);
	return ret;
}

static int build_libs(struct probe_table *t, const struct probe_selection *opts, const struct import_set *imports,
		      unsigned int flags, char *err, size_t err_sz)
{
	char globs[512];
	size_t max;
	int ret;

	t->libs = calloc(t->files.cnt, sizeof(*t->libs));
	if (!t->libs)
		return -ENOMEM;
	t->nr_libs = t->files.cnt;
	max = opts->max_functions ?: PROBE_TABLE_MAX_FUNCTIONS;
	for (size_t i = 0; i < t->nr_libs; i++) {
		t->libs[i].file = &t->files.libs[i];
		ret = load_lib(t, i, opts, imports, flags, err, err_sz);
		if (ret)
			return ret;
		/* Past the bound there is no need to read the other libraries. */
		if (t->nr_funcs > max) {
			if (i + 1 < t->nr_libs)
				snprintf(err, err_sz, "%zu functions matched in the first %zu of %zu libraries, more "
					 "than the %zu a profile takes unasked", t->nr_funcs, i + 1, t->nr_libs, max);
			else
				snprintf(err, err_sz, "%zu functions matched in %zu librar%s, more than the %zu a "
					 "profile takes unasked", t->nr_funcs, t->nr_libs, i ? "ies" : "y", max);
			return -E2BIG;
		}
	}
	if (!t->nr_funcs) {
		size_t unresolved = 0, unprobeable = 0, not_imported = 0;
		const char *first = NULL;

		for (size_t i = 0; i < t->nr_libs; i++) {
			unresolved += t->libs[i].ifunc_unresolved;
			unprobeable += t->libs[i].nr_unprobeable;
			not_imported += t->libs[i].nr_not_imported;
			if (!first && t->libs[i].nr_unprobeable)
				first = t->libs[i].unprobeable[0];
		}
		describe_globs(opts, globs, sizeof(globs));
		/* Functions that matched and were dropped are named as such, never "no function matched". */
		if (not_imported && !unprobeable && !unresolved)
			snprintf(err, err_sz, "no function to probe%s%s in %s%s: the %zu matching function%s %s "
				 "imported by no module of the target (%zu read)", globs[0] ? " for " : "", globs,
				 t->files.libs[0].display, t->nr_libs > 1 ? " and the other libraries" : "",
				 not_imported, not_imported == 1 ? "" : "s", not_imported == 1 ? "is" : "are",
				 t->boundary_modules);
		else if (unprobeable)
			snprintf(err, err_sz, "no function to probe%s%s in %s%s: %zu matching function%s (%s%s) "
				 "left out: no instruction near %s entry can take a uprobe", globs[0] ? " for " : "",
				 globs, t->files.libs[0].display, t->nr_libs > 1 ? " and the other libraries" : "",
				 unprobeable, unprobeable == 1 ? "" : "s", first, unprobeable > 1 ? ", ..." : "",
				 unprobeable == 1 ? "its" : "their");
		else if (unresolved)
			snprintf(err, err_sz, "no function to probe%s%s in %s%s: %zu matching IFUNC%s could "
				 "not be resolved to an implementation inside the library", globs[0] ? " for " : "",
				 globs, t->files.libs[0].display, t->nr_libs > 1 ? " and the other libraries" : "",
				 unresolved, unresolved == 1 ? "" : "s");
		else
			snprintf(err, err_sz, "no function matched%s%s in %s%s", globs[0] ? " " : "", globs,
				 t->files.libs[0].display, t->nr_libs > 1 ? " and the other libraries" : "");
		return -ENOENT;
	}
	t->offsets = calloc(t->nr_funcs, sizeof(*t->offsets));
	t->cookies = calloc(t->nr_funcs, sizeof(*t->cookies));
	if (!t->offsets || !t->cookies)
		return -ENOMEM;
	for (size_t i = 0; i < t->nr_funcs; i++) {
		t->offsets[i] = t->funcs[i].offset;
		t->cookies[i] = i | (t->funcs[i].entry_only ? DLPROF_COOKIE_ENTRY_ONLY : 0) |
				(t->funcs[i].stepped ? DLPROF_COOKIE_STEPPED : 0);
	}
	return 0;
}

void probe_table__free(struct probe_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_funcs; i++) {
		free(t->funcs[i].name);
		free(t->funcs[i].demangled);
		free(t->funcs[i].unwind_why);
	}
	for (size_t i = 0; i < t->nr_libs; i++) {
		names_free(t->libs[i].unprobeable, t->libs[i].nr_unprobeable);
		names_free(t->libs[i].entry_only, t->libs[i].nr_entry_only);
		names_free(t->libs[i].not_imported, t->libs[i].nr_not_imported);
		names_free(t->libs[i].ifunc_unresolved_names, t->libs[i].ifunc_unresolved);
	}
	free(t->funcs);
	free(t->libs);
	free(t->offsets);
	free(t->cookies);
	lib_list__free(&t->files);
	memset(t, 0, sizeof(*t));
}
