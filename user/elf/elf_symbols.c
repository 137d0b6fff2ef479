/* SPDX-License-Identifier: GPL-2.0-only */
/* Function symbols of an ELF file and the file offsets a uprobe takes. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* asprintf */
#endif
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/elf_file.h"
#include "elf/elf_symbols.h"
#include "util/array.h"
#include "elf/elf_versions.h"

/*
 * Only files this process could map are worth reading: uprobes and the
 * IFUNC helper's dlopen() both need the host's class, byte order and
 * machine.
 */
#if __SIZEOF_POINTER__ == 8
#define HOST_CLASS	ELFCLASS64
#else
#define HOST_CLASS	ELFCLASS32
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA	ELFDATA2LSB
#else
#define HOST_DATA	ELFDATA2MSB
#endif

#if defined(__x86_64__)
#define HOST_MACHINE	EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE	EM_AARCH64
#elif defined(__i386__)
#define HOST_MACHINE	EM_386
#elif defined(__arm__)
#define HOST_MACHINE	EM_ARM
#elif defined(__powerpc64__)
#define HOST_MACHINE	EM_PPC64
#elif defined(__s390x__)
#define HOST_MACHINE	EM_S390
#elif defined(__riscv)
#define HOST_MACHINE	EM_RISCV
#else
#error "elf_symbols: unknown host ELF machine"
#endif

#define BUILD_ID_MAX	20	/* bytes: SHA-1, what ld --build-id makes by default */

struct elf_seg {
	uint64_t vaddr;
	uint64_t filesz;
	uint64_t offset;
	bool exec;
};

struct elf_segs {
	size_t cnt;
	struct elf_seg seg[];
};

static bool ehdr_is_host(Elf *elf)
{
	GElf_Ehdr ehdr;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr))
		return false;
	return ehdr.e_ident[EI_CLASS] == HOST_CLASS &&
	       ehdr.e_ident[EI_DATA] == HOST_DATA &&
	       ehdr.e_machine == HOST_MACHINE &&
	       (ehdr.e_type == ET_DYN || ehdr.e_type == ET_EXEC);
}

void elf_close(int fd, Elf *elf)
{
	elf_end(elf);
	if (fd >= 0)
		close(fd);
}

int elf_open(const char *path, int *fdp, Elf **elfp)
{
	struct stat st;
	Elf *elf = NULL;
	int fd, err;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;

	/* O_NONBLOCK: a FIFO planted at a library path must not block us. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	/*
	 * ELF_C_READ rather than ELF_C_READ_MMAP: a file truncated while we
	 * read it then gives a libelf error instead of SIGBUS.
	 */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || !ehdr_is_host(elf)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	*fdp = fd;
	*elfp = elf;
	return 0;

cleanup:
	elf_close(fd, elf);
	return err;
}

static int segs_read(Elf *elf, struct elf_segs **out)
{
	struct elf_segs *segs;
	size_t phnum, i, nload = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	/* Count first: phnum comes from the file and may be absurd. */
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph))
			return -ENOEXEC;
		nload += ph.p_type == PT_LOAD;
	}
	if (!nload)
		return -ENOEXEC;

	segs = calloc(1, sizeof(*segs) + nload * sizeof(segs->seg[0]));
	if (!segs)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, i, &ph)) {
			free(segs);
			return -ENOEXEC;
		}
		if (ph.p_type != PT_LOAD)
			continue;
		segs->seg[segs->cnt++] = (struct elf_seg){
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.offset = ph.p_offset,
			.exec = ph.p_flags & PF_X,
		};
	}
	*out = segs;
	return 0;
}

int elf_segs__load(const char *path, struct elf_segs **out)
{
	Elf *elf = NULL;
	int fd = -1, err;

	*out = NULL;
	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	err = segs_read(elf, out);
	elf_close(fd, elf);
	return err;
}

void elf_segs__free(struct elf_segs *segs)
{
	free(segs);
}

int elf_segs__offset(const struct elf_segs *segs, uint64_t vaddr, uint64_t *offset)
{
	const struct elf_seg *s;
	size_t i;
	int pass;

	/*
	 * Code lives in executable segments; the others are searched only
	 * for odd layouts. Only the file-backed part (p_filesz) has an offset.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < segs->cnt; i++) {
			s = &segs->seg[i];
			if (s->exec != (pass == 0))
				continue;
			if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
				*offset = vaddr - s->vaddr + s->offset;
				return 0;
			}
		}
	}
	return -ENOENT;
}

static size_t names_cnt(char *const *names)
{
	size_t n = 0;

	while (names && names[n])
		n++;
	return n;
}

void elf_func__clear(struct elf_func *f)
{
	size_t i;

	if (!f)
		return;
	free(f->name);
	for (i = 0; f->aliases && f->aliases[i]; i++)
		free(f->aliases[i]);
	free(f->aliases);
	*f = (struct elf_func){};
}

void elf_funcs__free(struct elf_func_list *list)
{
	size_t i;

	if (!list)
		return;
	for (i = 0; i < list->cnt; i++)
		elf_func__clear(&list->funcs[i]);
	free(list->funcs);
	*list = (struct elf_func_list){};
}

int elf_func__matches(const struct elf_func *f, const char *pattern)
{
	size_t i;

	if (!f || !f->name || !pattern)
		return 0;
	if (fnmatch(pattern, f->name, 0) == 0)
		return 1;
	for (i = 0; f->aliases && f->aliases[i]; i++) {
		if (fnmatch(pattern, f->aliases[i], 0) == 0)
			return 1;
	}
	return 0;
}

static int bind_rank(unsigned int flags)
{
	if (flags & ELF_FUNC_GLOBAL)
		return 0;
	if (flags & ELF_FUNC_WEAK)
		return 1;
	return 2;
}

/* < 0 when a's name should be the entry's name rather than b's. */
static int func_pref_cmp(const struct elf_func *a, const struct elf_func *b)
{
	size_t la, lb;
	int d;

	/* A resolved IFUNC keeps its name where it lands: that is what users call. */
	d = !(a->flags & ELF_FUNC_IFUNC_RESOLVED) - !(b->flags & ELF_FUNC_IFUNC_RESOLVED);
	if (d)
		return d;
	d = !(a->flags & ELF_FUNC_DYNAMIC) - !(b->flags & ELF_FUNC_DYNAMIC);
	if (d)
		return d;
	d = bind_rank(a->flags) - bind_rank(b->flags);
	if (d)
		return d;
	/* gcc's clones and aliases (foo.localalias, foo.cold, foo.isra.0) carry a '.'. */
	d = (strchr(a->name, '.') != NULL) - (strchr(b->name, '.') != NULL);
	if (d)
		return d;
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int func_cmp(const void *pa, const void *pb)
{
	const struct elf_func *a = pa, *b = pb;

	if (a->file_offset != b->file_offset)
		return a->file_offset < b->file_offset ? -1 : 1;
	return func_pref_cmp(a, b);
}

/* Takes ownership of name; aliases has room for it and a NULL. */
static void alias_add(struct elf_func *f, size_t *n, char *name)
{
	size_t i;

	if (strcmp(f->name, name) == 0)
		goto dup;
	for (i = 0; i < *n; i++) {
		if (strcmp(f->aliases[i], name) == 0)
			goto dup;
	}
	f->aliases[(*n)++] = name;
	f->aliases[*n] = NULL;
	return;
dup:
	free(name);
}

/* Move src's names into dst; on failure neither is changed. */
static int func_absorb(struct elf_func *dst, struct elf_func *src)
{
	size_t nd = names_cnt(dst->aliases), ns = names_cnt(src->aliases), i;
	char **aliases;

	aliases = realloc(dst->aliases, (nd + ns + 2) * sizeof(*aliases));
	if (!aliases)
		return -ENOMEM;
	dst->aliases = aliases;
	aliases[nd] = NULL;

	alias_add(dst, &nd, src->name);
	for (i = 0; i < ns; i++)
		alias_add(dst, &nd, src->aliases[i]);
	free(src->aliases);

	dst->flags |= src->flags;
	if (dst->flags & (ELF_FUNC_GLOBAL | ELF_FUNC_WEAK))
		dst->flags &= ~ELF_FUNC_LOCAL;
	if (!dst->size)
		dst->size = src->size;
	*src = (struct elf_func){};
	return 0;
}

int elf_funcs__normalize(struct elf_func_list *list)
{
	struct elf_func *f;
	size_t i, n = 0;
	int err = 0;

	if (!list->cnt)
		return 0;
	qsort(list->funcs, list->cnt, sizeof(*list->funcs), func_cmp);

	for (i = 0; i < list->cnt; i++) {
		f = &list->funcs[i];
		if (n && list->funcs[n - 1].file_offset == f->file_offset) {
			err = func_absorb(&list->funcs[n - 1], f);
			if (err)
				break;
			continue;
		}
		if (!f->aliases) {
			f->aliases = calloc(1, sizeof(*f->aliases));
			if (!f->aliases) {
				err = -ENOMEM;
				break;
			}
		}
		list->funcs[n++] = *f;
	}
	/* Keep what is not merged yet so that the caller can free it all. */
	memmove(&list->funcs[n], &list->funcs[i], (list->cnt - i) * sizeof(*list->funcs));
	list->cnt = n + list->cnt - i;
	return err;
}

/* version: a non-default symbol version, which becomes part of the name ("memcpy@GLIBC_2.2.5"). */
static int func_add(struct elf_func_list *list, size_t *cap, const char *name, const char *version,
		    const GElf_Sym *sym, uint64_t offset, unsigned int flags)
{
	char *dup = NULL;

	if (ARRAY_RESERVE(list->funcs, *cap, list->cnt + 1))
		return -ENOMEM;
	if (version ? asprintf(&dup, "%s@%s", name, version) < 0 : !(dup = strdup(name)))
		return -ENOMEM;
	list->funcs[list->cnt++] = (struct elf_func){
		.name = dup,
		.vaddr = sym->st_value,
		.size = sym->st_size,
		.file_offset = offset,
		.flags = flags,
	};
	return 0;
}

static bool sym_is_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) &&
	       sym->st_shndx != SHN_UNDEF && sym->st_value != 0;
}

static unsigned int sym_flags(const GElf_Sym *sym, bool dynamic)
{
	unsigned int flags = dynamic ? ELF_FUNC_DYNAMIC : 0;

	switch (GELF_ST_BIND(sym->st_info)) {
	case STB_LOCAL:
		flags |= ELF_FUNC_LOCAL;
		break;
	case STB_WEAK:
		flags |= ELF_FUNC_WEAK;
		break;
	default:	/* STB_GLOBAL, STB_GNU_UNIQUE */
		flags |= ELF_FUNC_GLOBAL;
		break;
	}
	if (GELF_ST_TYPE(sym->st_info) == STT_GNU_IFUNC)
		flags |= ELF_FUNC_IFUNC;
	return flags;
}

/*
 * gcc's hot/cold splitting moves a function's unlikely blocks (a throw, a
 * catch handler, an abort path) into a local symbol foo.cold (foo.cold.N
 * before gcc 9; foo.part.0.cold for a part's, foo.isra.0.cold for a
 * clone's): code jumped to from foo, running in foo's frame, never called.
 * It is no function: an entry probe there counts no call, and a return
 * probe would overwrite whatever foo keeps on top of its stack. Clones
 * (foo.isra.N, foo.constprop.N), parts split off for partial inlining
 * (foo.part.N) and foo.lto_priv.N are functions, called with a frame of
 * their own. (clang's hot/cold splitting names called functions foo.cold.N:
 * left out too, which loses them but harms nothing.)
 */
static bool is_cold_fragment(const char *name, const GElf_Sym *sym)
{
	const char *cold = NULL, *p = name, *rest;

	if (GELF_ST_BIND(sym->st_info) != STB_LOCAL)
		return false;
	while ((p = strstr(p + 1, ".cold")))
		cold = p;
	if (!cold)
		return false;
	rest = cold + strlen(".cold");
	if (!*rest)
		return true;
	if (*rest++ != '.' || !*rest)
		return false;
	return strspn(rest, "0123456789") == strlen(rest);
}

/* C++ code throws through __cxa_throw, and any code can unwind through _Unwind_*. */
static bool imports_unwinder(const char *name)
{
	return !strcmp(name, "__cxa_throw") || !strncmp(name, "_Unwind_", 8);
}

static int syms_read(Elf *elf, Elf_Scn *scn, const GElf_Shdr *shdr, const struct elf_segs *segs,
		     const struct elf_versions *vers, struct elf_func_list *list, size_t *cap)
{
	size_t symsz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT), i, nsyms;
	bool dynamic = shdr->sh_type == SHT_DYNSYM;
	const char *name;
	Elf_Data *data;
	uint64_t offset;
	GElf_Sym sym;
	int err;

	if (!shdr->sh_size)
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !symsz)
		return -ENOEXEC;
	nsyms = data->d_size / symsz;
	for (i = 0; i < nsyms; i++) {
		if (!gelf_getsym(data, i, &sym))
			return -ENOEXEC;
		if (dynamic && sym.st_shndx == SHN_UNDEF && !list->can_throw) {
			name = elf_strptr(elf, shdr->sh_link, sym.st_name);
			list->can_throw = name && imports_unwinder(name);
		}
		if (!sym_is_func(&sym))
			continue;
		/* elf_strptr() checks sh_link, the index and the terminating NUL. */
		name = elf_strptr(elf, shdr->sh_link, sym.st_name);
		if (!name)
			return -ENOEXEC;
		if (!name[0] || is_cold_fragment(name, &sym) || elf_segs__offset(segs, sym.st_value, &offset))
			continue;
		err = func_add(list, cap, name, dynamic ? elf_versions__hidden(vers, i) : NULL,
			       &sym, offset, sym_flags(&sym, dynamic));
		if (err)
			return err;
	}
	return 0;
}

static void build_id_read(Elf_Data *data, char *out, size_t out_sz)
{
	size_t off = 0, next, name_off, desc_off, i;
	const unsigned char *desc;
	GElf_Nhdr nhdr;

	/* gelf_getnote() checks that name and descriptor lie inside data. */
	while ((next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
		off = next;
		if (nhdr.n_type != NT_GNU_BUILD_ID || nhdr.n_namesz != sizeof("GNU") ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", sizeof("GNU")) ||
		    !nhdr.n_descsz || nhdr.n_descsz > BUILD_ID_MAX || nhdr.n_descsz * 2 >= out_sz)
			continue;
		desc = (const unsigned char *)data->d_buf + desc_off;
		for (i = 0; i < nhdr.n_descsz; i++)
			snprintf(out + 2 * i, out_sz - 2 * i, "%02x", desc[i]);
		return;
	}
}

static int scn_read(Elf *elf, Elf_Scn *scn, const struct elf_segs *segs,
		    const struct elf_versions *vers, struct elf_func_list *list, size_t *cap)
{
	Elf_Data *data;
	GElf_Shdr shdr;

	if (!gelf_getshdr(scn, &shdr))
		return -ENOEXEC;
	if (shdr.sh_type == SHT_PROGBITS && !list->can_throw) {
		size_t shstrndx;
		const char *name;

		/* Call-site tables of code that catches or cleans up during an unwind. */
		if (!elf_getshdrstrndx(elf, &shstrndx) && (name = elf_strptr(elf, shstrndx, shdr.sh_name)))
			list->can_throw = !strcmp(name, ".gcc_except_table");
	}
	switch (shdr.sh_type) {
	case SHT_DYNSYM:
	case SHT_SYMTAB:
		return syms_read(elf, scn, &shdr, segs, vers, list, cap);
	case SHT_NOTE:
		if (list->build_id[0] || !shdr.sh_size)
			return 0;
		data = elf_getdata(scn, NULL);
		if (!data)
			return -ENOEXEC;
		build_id_read(data, list->build_id, sizeof(list->build_id));
		return 0;
	default:
		return 0;
	}
}

/*
 * gold and lld put a plain "f" in .symtab where .dynsym has "f@V1", an old
 * version: as an alias it would make --func f select the old version too,
 * and the IFUNC helper could resolve it as the default. A function named
 * by a non-default version keeps no name without one.
 */
static void drop_unversioned_aliases(struct elf_func_list *list)
{
	for (size_t i = 0; i < list->cnt; i++) {
		struct elf_func *f = &list->funcs[i];
		const char *at = strchr(f->name, '@');
		size_t base = at ? (size_t)(at - f->name) : 0, k = 0;

		if (!at)
			continue;
		for (size_t j = 0; f->aliases[j]; j++) {
			if (strlen(f->aliases[j]) == base && !strncmp(f->aliases[j], f->name, base)) {
				free(f->aliases[j]);
				continue;
			}
			f->aliases[k++] = f->aliases[j];
		}
		f->aliases[k] = NULL;
	}
}

int elf_funcs__load(const char *path, struct elf_func_list *out)
{
	struct elf_func_list list = {};
	struct elf_versions *vers = NULL;
	struct elf_segs *segs = NULL;
	size_t cap = 0, shnum, i;
	Elf_Scn *scn;
	Elf *elf = NULL;
	int fd = -1, err;

	*out = (struct elf_func_list){};
	err = elf_open(path, &fd, &elf);
	if (err)
		return err;
	err = segs_read(elf, &segs);
	if (err)
		goto cleanup;
	/* Damaged version tables cost the version names, not the library. */
	err = elf_versions__read(elf, &vers);
	if (err == -ENOEXEC)
		err = 0;
	if (err)
		goto cleanup;
	if (elf_getshdrnum(elf, &shnum)) {
		err = -ENOEXEC;
		goto cleanup;
	}
	/* Section 0 is the reserved null section. */
	for (i = 1; i < shnum; i++) {
		scn = elf_getscn(elf, i);
		err = scn ? scn_read(elf, scn, segs, vers, &list, &cap) : -ENOEXEC;
		if (err)
			goto cleanup;
	}
	err = elf_funcs__normalize(&list);
	if (err)
		goto cleanup;
	drop_unversioned_aliases(&list);
	*out = list;
	list = (struct elf_func_list){};

cleanup:
	elf_funcs__free(&list);
	elf_versions__free(vers);
	elf_segs__free(segs);
	elf_close(fd, elf);
	return err;
}
