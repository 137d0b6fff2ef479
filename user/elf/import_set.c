// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/elf_file.h"
#include "elf/import_set.h"
#include "elf/lib_resolve.h"
#include "util/array.h"
#include "util/sorted.h"
#include "util/str_list.h"

/*
 * A program and the libraries it needs rarely pass a few dozen; a bound
 * keeps a crafted chain of DT_NEEDED entries from reading the disk whole.
 */
#define IMPORT_SET_MAX_MODULES 1024

struct names_buf {
	char **names;
	size_t cnt, cap;
};

static int names_push(struct names_buf *b, const char *name)
{
	size_t len = strcspn(name, "@");

	if (ARRAY_RESERVE(b->names, b->cap, b->cnt + 1))
		return -ENOMEM;
	b->names[b->cnt] = strndup(name, len);
	if (!b->names[b->cnt])
		return -ENOMEM;
	b->cnt++;
	return 0;
}

/* A symbol another module must define: what a call out of this one goes to. */
static bool sym_is_import(const GElf_Sym *sym)
{
	unsigned int bind = GELF_ST_BIND(sym->st_info), type = GELF_ST_TYPE(sym->st_info);

	return sym->st_shndx == SHN_UNDEF && sym->st_name && (bind == STB_GLOBAL || bind == STB_WEAK) &&
	       (type == STT_FUNC || type == STT_NOTYPE || type == STT_GNU_IFUNC);
}

static int dynsym_imports(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct names_buf *out)
{
	size_t symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	GElf_Sym sym;
	int err;

	if (!data || !symsz)
		return -ENOEXEC;
	for (size_t i = 0; i < data->d_size / symsz; i++) {
		if (!gelf_getsym(data, (int)i, &sym))
			return -ENOEXEC;
		if (!sym_is_import(&sym))
			continue;
		/* elf_strptr() checks sh_link, the index and the terminating NUL. */
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name)
			return -ENOEXEC;
		err = names_push(out, name);
		if (err)
			return err;
	}
	return 0;
}

static int dynamic_needed(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, struct str_list *needed)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	const char *name;
	GElf_Dyn dyn;
	int err;

	if (!data || !shdr->sh_entsize)
		return -ENOEXEC;
	for (size_t i = 0; i < shdr->sh_size / shdr->sh_entsize; i++) {
		if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		if (dyn.d_tag != DT_NEEDED || !needed)
			continue;
		name = elf_strptr(elf, shdr->sh_link, dyn.d_un.d_val);
		if (!name)
			return -ENOEXEC;
		err = str_list_push(needed, name, strlen(name));
		if (err)
			return err;
	}
	return 0;
}

/* The imports of the ELF file at path into out; its DT_NEEDED names into needed (NULL: not wanted). */
static int module_read(const char *path, struct names_buf *out, struct str_list *needed)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;
	Elf *elf = NULL;
	int fd = -1, err;

	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	while (!err && (scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &shdr))
			err = -ENOEXEC;
		else if (shdr.sh_type == SHT_DYNSYM && shdr.sh_size)
			err = dynsym_imports(elf, scn, &shdr, out);
		else if (shdr.sh_type == SHT_DYNAMIC && shdr.sh_size)
			err = dynamic_needed(elf, scn, &shdr, needed);
	}
	elf_close(fd, elf);
	return err;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted and unique, into s. */
static void names_finish(struct names_buf *b, struct import_set *s)
{
	size_t k = 0;

	if (b->cnt)
		qsort(b->names, b->cnt, sizeof(*b->names), name_cmp);
	for (size_t i = 0; i < b->cnt; i++) {
		if (k && !strcmp(b->names[k - 1], b->names[i])) {
			free(b->names[i]);
			continue;
		}
		b->names[k++] = b->names[i];
	}
	s->names = b->names;
	s->cnt = k;
	*b = (struct names_buf){};
}

static void names_buf_free(struct names_buf *b)
{
	for (size_t i = 0; i < b->cnt; i++)
		free(b->names[i]);
	free(b->names);
	*b = (struct names_buf){};
}

/* The executable file-backed mappings of pid, as paths the profiler opens (through /proc/PID/root). */
static int process_modules(pid_t pid, struct str_list *paths)
{
	char maps[64], line[PATH_MAX + 256], path[PATH_MAX + 64];
	FILE *f;
	int err = 0;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && fgets(line, sizeof(line), f)) {
		char perms[5] = "", *file = strchr(line, '/');
		bool seen = false;

		if (sscanf(line, "%*s %4s", perms) != 1 || perms[2] != 'x' || !file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		/* The kernel marks a file replaced or removed since it was mapped. */
		if (strstr(file, " (deleted)"))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, file);
		for (size_t i = 0; i < paths->cnt && !seen; i++)
			seen = !strcmp(paths->items[i], path);
		if (!seen)
			err = str_list_push(paths, path, strlen(path));
	}
	fclose(f);
	return err;
}

int import_set__of_process(struct import_set *s, pid_t pid)
{
	struct str_list paths = {};
	struct names_buf b = {};
	int err;

	*s = (struct import_set){};
	err = process_modules(pid, &paths);
	for (size_t i = 0; !err && i < paths.cnt && i < IMPORT_SET_MAX_MODULES; i++) {
		err = module_read(paths.items[i], &b, NULL);
		/* A mapping that is not ELF (a JIT's file, a data file mapped executable) imports nothing. */
		if (err == -ENOEXEC || err == -ENOENT)
			err = 0;
		else if (!err)
			s->nr_modules++;
	}
	str_list_free(&paths);
	if (err) {
		names_buf_free(&b);
		return err;
	}
	names_finish(&b, s);
	return 0;
}

/* The libraries a module needs, appended to mods (skipping those already there), as ld.so would find them for exe. */
static void needed_resolve(const struct str_list *needed, const char *exe, struct lib_list *mods)
{
	char where[256];

	/* A library the program's loader would not find either is the program's problem, not the profile's. */
	for (size_t i = 0; i < needed->cnt && mods->cnt < IMPORT_SET_MAX_MODULES; i++)
		lib_resolve_program(needed->items[i], 0, exe, mods, where, sizeof(where));
}

int import_set__of_program(struct import_set *s, const char *exe)
{
	struct lib_list mods = {};
	struct names_buf b = {};
	struct str_list needed = {};
	int err;

	*s = (struct import_set){};
	err = module_read(exe, &b, &needed);
	if (!err)
		needed_resolve(&needed, exe, &mods);
	str_list_free(&needed);
	/* mods grows as each library's own needs are found: a breadth-first walk. */
	for (size_t i = 0; !err && i < mods.cnt; i++) {
		err = module_read(mods.libs[i].path, &b, &needed);
		if (err == -ENOEXEC || err == -ENOENT) {
			err = 0;
			continue;
		}
		if (!err)
			needed_resolve(&needed, exe, &mods);
		str_list_free(&needed);
	}
	s->nr_modules = 1 + mods.cnt;
	lib_list__free(&mods);
	if (err) {
		names_buf_free(&b);
		s->nr_modules = 0;
		return err;
	}
	names_finish(&b, s);
	return 0;
}

bool import_set__has(const struct import_set *s, const char *name)
{
	size_t len = strcspn(name, "@"), at;

	/* names[i] < the first len bytes of name, in strcmp's order: a prefix of them counts as below. */
	at = PARTITION_POINT(s->cnt, i, strncmp(s->names[i], name, len) < 0);
	return at < s->cnt && !strncmp(s->names[at], name, len) && !s->names[at][len];
}

void import_set__free(struct import_set *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cnt; i++)
		free(s->names[i]);
	free(s->names);
	*s = (struct import_set){};
}
