// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_symbols.h"
#include "probe/copy_funcs.h"

static const struct elf_func *find_func(const struct elf_func_list *elf, const char *name)
{
	for (size_t i = 0; i < elf->cnt; i++) {
		const struct elf_func *f = &elf->funcs[i];

		if (!strcmp(f->name, name))
			return f;
		for (size_t a = 0; f->aliases && f->aliases[a]; a++)
			if (!strcmp(f->aliases[a], name))
				return f;
	}
	return NULL;
}

int copy_funcs__map(const struct probe_table *t, size_t lib, const char *path, struct copy_funcs *m)
{
	const struct probe_lib *pl = &t->libs[lib];
	struct elf_func_list elf = {};
	bool same_build;
	int err;

	*m = (struct copy_funcs){};
	m->offsets = calloc(pl->nr_funcs + 1, sizeof(*m->offsets));
	m->cookies = calloc(pl->nr_funcs + 1, sizeof(*m->cookies));
	if (!m->offsets || !m->cookies)
		return -ENOMEM;
	err = elf_funcs__load(path, &elf);
	if (err) {
		elf_funcs__free(&elf);
		return err;
	}
	same_build = pl->build_id[0] && !strcmp(pl->build_id, elf.build_id);
	for (size_t i = 0; i < pl->nr_funcs; i++) {
		size_t id = pl->first_func + i;
		const struct elf_func *f = NULL;

		if (!same_build) {
			f = find_func(&elf, t->funcs[id].name);
			if (!f || (f->flags & ELF_FUNC_IFUNC)) {
				m->missing++;
				continue;
			}
		}
		m->offsets[m->cnt] = same_build ? t->offsets[id] : f->file_offset;
		m->cookies[m->cnt] = t->cookies[id];
		/* Timed because the primary's code cannot unwind through it: another build's was not read. */
		if (!same_build && t->funcs[id].unwind_judged && t->funcs[id].entry_only == ENTRY_ONLY_NO)
			m->cookies[m->cnt] |= DLPROF_COOKIE_ENTRY_ONLY;
		m->cnt++;
	}
	elf_funcs__free(&elf);
	return 0;
}

void copy_funcs__free(struct copy_funcs *m)
{
	if (!m)
		return;
	free(m->offsets);
	free(m->cookies);
	*m = (struct copy_funcs){};
}
