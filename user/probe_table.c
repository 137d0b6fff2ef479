// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_symbols.h"
#include "probe_table.h"

static int any_name_matches(const char *pattern, const char *name, char *const *aliases)
{
	if (!fnmatch(pattern, name, 0))
		return 1;
	for (size_t i = 0; aliases && aliases[i]; i++)
		if (!fnmatch(pattern, aliases[i], 0))
			return 1;
	return 0;
}

int probe_table_selects(const struct profile_opts *opts, const char *name, char *const *aliases)
{
	int keep = !opts->funcs.cnt;

	for (size_t i = 0; i < opts->funcs.cnt && !keep; i++)
		keep = any_name_matches(opts->funcs.items[i], name, aliases);
	for (size_t i = 0; i < opts->excludes.cnt && keep; i++)
		keep = !any_name_matches(opts->excludes.items[i], name, aliases);
	return keep;
}

static int add_lib_funcs(struct probe_table *t, size_t lib_idx, const struct elf_func_list *elf,
			 const struct profile_opts *opts)
{
	size_t n = 0;
	struct probe_func *funcs;

	funcs = realloc(t->funcs, (t->nr_funcs + elf->cnt + 1) * sizeof(*funcs));
	if (!funcs)
		return -ENOMEM;
	t->funcs = funcs;
	for (size_t i = 0; i < elf->cnt; i++) {
		const struct elf_func *f = &elf->funcs[i];
		struct probe_func *pf = &t->funcs[t->nr_funcs + n];

		if (!probe_table_selects(opts, f->name, f->aliases))
			continue;
		pf->name = strdup(f->name);
		if (!pf->name)
			return -ENOMEM;
		pf->lib = lib_idx;
		pf->offset = f->file_offset;
		pf->vaddr = f->vaddr;
		n++;
	}
	t->libs[lib_idx].first_func = t->nr_funcs;
	t->libs[lib_idx].nr_funcs = n;
	t->nr_funcs += n;
	return 0;
}

static int load_lib(struct probe_table *t, size_t lib_idx, const struct profile_opts *opts,
		    char *err, size_t err_sz)
{
	struct probe_lib *lib = &t->libs[lib_idx];
	struct elf_func_list elf = {};
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
	ret = ifunc_resolve(lib->file->path, &elf, &lib->ifunc_unresolved);
	if (ret) {
		snprintf(err, err_sz, "cannot resolve the IFUNCs of %s: %s", lib->file->display,
			 strerror(-ret));
		goto cleanup;
	}
	memcpy(lib->build_id, elf.build_id, sizeof(lib->build_id));
	ret = add_lib_funcs(t, lib_idx, &elf, opts);
cleanup:
	elf_funcs__free(&elf);
	return ret;
}

static void describe_globs(const struct profile_opts *opts, char *buf, size_t sz)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < opts->funcs.cnt && off < sz; i++)
		off += (size_t)snprintf(buf + off, sz - off, "%s--func %s", i ? " " : "", opts->funcs.items[i]);
	for (size_t i = 0; i < opts->excludes.cnt && off < sz; i++)
		off += (size_t)snprintf(buf + off, sz - off, "%s--exclude %s", off ? " " : "",
					opts->excludes.items[i]);
}

int probe_table__build(struct probe_table *t, const struct profile_opts *opts, pid_t pid,
		       char *err, size_t err_sz)
{
	char where[1024], globs[512];
	int ret;

	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < opts->libs.cnt; i++) {
		ret = lib_resolve(opts->libs.items[i], pid, &t->files, where, sizeof(where));
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
			snprintf(err, err_sz, "cannot resolve library '%s': %s", opts->libs.items[i],
				 strerror(-ret));
			return ret;
		}
	}
	t->libs = calloc(t->files.cnt, sizeof(*t->libs));
	if (!t->libs)
		return -ENOMEM;
	t->nr_libs = t->files.cnt;
	for (size_t i = 0; i < t->nr_libs; i++) {
		t->libs[i].file = &t->files.libs[i];
		ret = load_lib(t, i, opts, err, err_sz);
		if (ret)
			return ret;
	}
	if (!t->nr_funcs) {
		describe_globs(opts, globs, sizeof(globs));
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
		t->cookies[i] = i;
	}
	return 0;
}

void probe_table__free(struct probe_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nr_funcs; i++)
		free(t->funcs[i].name);
	free(t->funcs);
	free(t->libs);
	free(t->offsets);
	free(t->cookies);
	lib_list__free(&t->files);
	memset(t, 0, sizeof(*t));
}
