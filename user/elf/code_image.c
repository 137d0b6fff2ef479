// SPDX-License-Identifier: GPL-2.0-only
/*
 * Read straight from the file's bytes, with every offset checked, rather
 * than through libelf: the caller already holds them (read, never mapped:
 * see lib_image in probe/probe_table.c), and only a handful of tables are
 * needed.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elf/code_image.h"
#include "util/array.h"
#include "util/sorted.h"

struct code_seg {
	uint64_t vaddr;
	uint64_t offset;
	uint64_t filesz;
	bool exec;
};

struct code_sym {
	uint64_t addr;
	const char *name;
	bool ifunc;
};

struct code_reloc {
	uint64_t slot;
	struct code_slot to;
};

struct code_image {
	const uint8_t *file;
	size_t len;
	struct code_seg *segs;
	size_t nr_segs;
	uint64_t relro_begin, relro_end;
	struct code_sym *syms;		/* sorted by addr */
	size_t nr_syms;
	struct code_reloc *relocs;	/* sorted by slot */
	size_t nr_relocs;
	uint64_t *starts;		/* sorted, unique */
	size_t nr_starts;
	struct fde_range *fdes;
	size_t nr_fdes;
};

/* file[off..off+n) lies in the file. */
static bool in_file(const struct code_image *ci, uint64_t off, uint64_t n)
{
	return off <= ci->len && n <= ci->len - off;
}

/* A NUL-terminated string at strtab offset name_off of the table at file[off..off+size), or NULL. */
static const char *str_at(const struct code_image *ci, uint64_t off, uint64_t size, uint64_t name_off)
{
	const char *s;

	if (!in_file(ci, off, size) || name_off >= size)
		return NULL;
	s = (const char *)ci->file + off + name_off;
	return memchr(s, '\0', size - name_off) ? s : NULL;
}

static int segs_read(struct code_image *ci, const Elf64_Ehdr *eh)
{
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !in_file(ci, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr)))
		return -ENOEXEC;
	ci->segs = calloc(eh->e_phnum ? eh->e_phnum : 1, sizeof(*ci->segs));
	if (!ci->segs)
		return -ENOMEM;
	for (size_t i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, ci->file + eh->e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_GNU_RELRO) {
			ci->relro_begin = ph.p_vaddr;
			ci->relro_end = ph.p_vaddr + ph.p_memsz;
		}
		if (ph.p_type != PT_LOAD || !in_file(ci, ph.p_offset, ph.p_filesz))
			continue;
		ci->segs[ci->nr_segs++] = (struct code_seg){
			.vaddr = ph.p_vaddr, .offset = ph.p_offset, .filesz = ph.p_filesz, .exec = ph.p_flags & PF_X,
		};
	}
	return ci->nr_segs ? 0 : -ENOEXEC;
}

static const uint8_t *seg_bytes(const struct code_image *ci, uint64_t vaddr, size_t *avail, bool code_only)
{
	for (size_t i = 0; i < ci->nr_segs; i++) {
		const struct code_seg *s = &ci->segs[i];

		if ((code_only && !s->exec) || vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		*avail = (size_t)(s->filesz - (vaddr - s->vaddr));
		return ci->file + s->offset + (vaddr - s->vaddr);
	}
	*avail = 0;
	return NULL;
}

const uint8_t *code_image_code(const struct code_image *ci, uint64_t vaddr, size_t *avail)
{
	return seg_bytes(ci, vaddr, avail, true);
}

const uint8_t *code_image_data(const struct code_image *ci, uint64_t vaddr, size_t *avail)
{
	return seg_bytes(ci, vaddr, avail, false);
}

bool code_image_is_code(const struct code_image *ci, uint64_t vaddr)
{
	size_t avail;

	return code_image_code(ci, vaddr, &avail) != NULL;
}

static bool shdr_get(const struct code_image *ci, const Elf64_Ehdr *eh, size_t i, Elf64_Shdr *sh)
{
	if (i >= eh->e_shnum)
		return false;
	memcpy(sh, ci->file + eh->e_shoff + i * sizeof(*sh), sizeof(*sh));
	return true;
}

/* The symbol table section at index symtab_idx: its entries and their string table. */
struct sym_table {
	uint64_t off, cnt;
	uint64_t str_off, str_size;
};

static bool sym_table_get(const struct code_image *ci, const Elf64_Ehdr *eh, size_t idx, struct sym_table *t)
{
	Elf64_Shdr sh, str;

	if (!shdr_get(ci, eh, idx, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) ||
	    sh.sh_entsize != sizeof(Elf64_Sym) || !in_file(ci, sh.sh_offset, sh.sh_size) ||
	    !shdr_get(ci, eh, sh.sh_link, &str) || !in_file(ci, str.sh_offset, str.sh_size))
		return false;
	*t = (struct sym_table){ .off = sh.sh_offset, .cnt = sh.sh_size / sizeof(Elf64_Sym),
				 .str_off = str.sh_offset, .str_size = str.sh_size };
	return true;
}

static bool sym_get(const struct code_image *ci, const struct sym_table *t, uint64_t i, Elf64_Sym *sym,
		    const char **name)
{
	if (i >= t->cnt)
		return false;
	memcpy(sym, ci->file + t->off + i * sizeof(*sym), sizeof(*sym));
	*name = str_at(ci, t->str_off, t->str_size, sym->st_name);
	return *name != NULL;
}

static int syms_read(struct code_image *ci, const Elf64_Ehdr *eh, size_t idx, size_t *cap)
{
	struct sym_table t;

	if (!sym_table_get(ci, eh, idx, &t))
		return 0;
	for (uint64_t i = 1; i < t.cnt; i++) {
		const char *name;
		Elf64_Sym sym;
		int type;

		if (!sym_get(ci, &t, i, &sym, &name))
			continue;
		type = ELF64_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
		    !name[0])
			continue;
		if (ARRAY_RESERVE(ci->syms, *cap, ci->nr_syms + 1))
			return -ENOMEM;
		ci->syms[ci->nr_syms++] = (struct code_sym){
			.addr = sym.st_value, .name = name, .ifunc = type == STT_GNU_IFUNC,
		};
	}
	return 0;
}

/* What the relocation r makes of its slot; false for one the analysis need not know. */
static bool reloc_target(const struct code_image *ci, const struct sym_table *t, const Elf64_Rela *r,
			 struct code_slot *to)
{
	uint32_t type = ELF64_R_TYPE(r->r_info);
	const char *name;
	Elf64_Sym sym;

	switch (type) {
	case R_X86_64_IRELATIVE:
		*to = (struct code_slot){ .kind = SLOT_IFUNC, .value = (uint64_t)r->r_addend };
		return true;
	case R_X86_64_RELATIVE:
		/* Fixed only where nothing can write it after relocation. */
		if (r->r_offset < ci->relro_begin || r->r_offset >= ci->relro_end)
			return false;
		*to = (struct code_slot){ .kind = SLOT_LOCAL, .value = (uint64_t)r->r_addend };
		return true;
	case R_X86_64_JUMP_SLOT:
	case R_X86_64_GLOB_DAT:
	case R_X86_64_64:
		if (!t || !sym_get(ci, t, ELF64_R_SYM(r->r_info), &sym, &name) || !name[0])
			return false;
		/*
		 * The GOT's slots (JUMP_SLOT, GLOB_DAT) only the dynamic linker
		 * writes; a plain pointer only where it is read-only after
		 * relocation, and without an addend (which points into data).
		 */
		if (type == R_X86_64_64 && (r->r_addend || r->r_offset < ci->relro_begin ||
					    r->r_offset >= ci->relro_end))
			return false;
		*to = (struct code_slot){ .kind = SLOT_SYMBOL, .name = name, .defined = sym.st_shndx != SHN_UNDEF,
					  .func = ELF64_ST_TYPE(sym.st_info) == STT_FUNC, .value = sym.st_value };
		if (to->defined && ELF64_ST_TYPE(sym.st_info) == STT_GNU_IFUNC)
			to->kind = SLOT_IFUNC;
		return true;
	default:
		return false;
	}
}

static int relocs_read(struct code_image *ci, const Elf64_Ehdr *eh, const Elf64_Shdr *sh, size_t *cap)
{
	struct sym_table t;
	bool have_syms;

	if (sh->sh_entsize != sizeof(Elf64_Rela) || !in_file(ci, sh->sh_offset, sh->sh_size))
		return 0;
	have_syms = sym_table_get(ci, eh, sh->sh_link, &t);
	for (uint64_t i = 0; i < sh->sh_size / sizeof(Elf64_Rela); i++) {
		struct code_slot to;
		Elf64_Rela r;

		memcpy(&r, ci->file + sh->sh_offset + i * sizeof(r), sizeof(r));
		if (!reloc_target(ci, have_syms ? &t : NULL, &r, &to))
			continue;
		if (ARRAY_RESERVE(ci->relocs, *cap, ci->nr_relocs + 1))
			return -ENOMEM;
		ci->relocs[ci->nr_relocs++] = (struct code_reloc){ .slot = r.r_offset, .to = to };
	}
	return 0;
}

static int eh_frame_read(struct code_image *ci, const Elf64_Shdr *sh)
{
	if (!in_file(ci, sh->sh_offset, sh->sh_size) || sh->sh_type == SHT_NOBITS)
		return 0;
	return eh_frame_ranges(ci->file + sh->sh_offset, sh->sh_size, sh->sh_addr, &ci->fdes, &ci->nr_fdes);
}

static int sections_read(struct code_image *ci, const Elf64_Ehdr *eh)
{
	size_t sym_cap = 0, reloc_cap = 0;
	Elf64_Shdr sh, shstr;
	bool have_names;
	int err = 0;

	/* A file without section headers still has code: the analysis only sees less of it. */
	if (!eh->e_shnum || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(ci, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return 0;
	have_names = shdr_get(ci, eh, eh->e_shstrndx, &shstr);
	for (size_t i = 0; i < eh->e_shnum && !err; i++) {
		const char *name;

		shdr_get(ci, eh, i, &sh);
		switch (sh.sh_type) {
		case SHT_DYNSYM:
		case SHT_SYMTAB:
			err = syms_read(ci, eh, i, &sym_cap);
			break;
		case SHT_RELA:
			err = relocs_read(ci, eh, &sh, &reloc_cap);
			break;
		default:
			name = have_names ? str_at(ci, shstr.sh_offset, shstr.sh_size, sh.sh_name) : NULL;
			if (name && !strcmp(name, ".eh_frame") && !ci->fdes)
				err = eh_frame_read(ci, &sh);
			break;
		}
	}
	return err;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct code_sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int reloc_cmp(const void *a, const void *b)
{
	const struct code_reloc *x = a, *y = b;

	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

static int u64_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int starts_build(struct code_image *ci)
{
	size_t n = 0;

	ci->starts = malloc((ci->nr_syms + ci->nr_fdes + 1) * sizeof(*ci->starts));
	if (!ci->starts)
		return -ENOMEM;
	for (size_t i = 0; i < ci->nr_syms; i++)
		ci->starts[n++] = ci->syms[i].addr;
	for (size_t i = 0; i < ci->nr_fdes; i++)
		ci->starts[n++] = ci->fdes[i].begin;
	qsort(ci->starts, n, sizeof(*ci->starts), u64_cmp);
	ci->nr_starts = 0;
	for (size_t i = 0; i < n; i++)
		if (!ci->nr_starts || ci->starts[ci->nr_starts - 1] != ci->starts[i])
			ci->starts[ci->nr_starts++] = ci->starts[i];
	return 0;
}

int code_image__new(const uint8_t *file, size_t len, struct code_image **out)
{
	struct code_image *ci;
	Elf64_Ehdr eh;
	int err;

	*out = NULL;
	if (len < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, file, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return -ENOEXEC;
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return -ENOMEM;
	ci->file = file;
	ci->len = len;
	err = segs_read(ci, &eh);
	if (!err)
		err = sections_read(ci, &eh);
	if (!err)
		err = starts_build(ci);
	if (err) {
		code_image__free(ci);
		return err;
	}
	qsort(ci->syms, ci->nr_syms, sizeof(*ci->syms), sym_cmp);
	qsort(ci->relocs, ci->nr_relocs, sizeof(*ci->relocs), reloc_cmp);
	*out = ci;
	return 0;
}

void code_image__free(struct code_image *ci)
{
	if (!ci)
		return;
	free(ci->segs);
	free(ci->syms);
	free(ci->relocs);
	free(ci->starts);
	free(ci->fdes);
	free(ci);
}

void code_image_slot(const struct code_image *ci, uint64_t vaddr, struct code_slot *out)
{
	size_t lo = PARTITION_POINT(ci->nr_relocs, i, ci->relocs[i].slot < vaddr);

	if (lo < ci->nr_relocs && ci->relocs[lo].slot == vaddr)
		*out = ci->relocs[lo].to;
	else
		*out = (struct code_slot){ .kind = SLOT_UNKNOWN };
}

/* The first symbol at or after vaddr. */
static size_t sym_lower_bound(const struct code_image *ci, uint64_t vaddr)
{
	return PARTITION_POINT(ci->nr_syms, i, ci->syms[i].addr < vaddr);
}

size_t code_image_names(const struct code_image *ci, uint64_t vaddr, const char **names, size_t max)
{
	size_t n = 0;

	for (size_t i = sym_lower_bound(ci, vaddr); i < ci->nr_syms && ci->syms[i].addr == vaddr; i++) {
		if (ci->syms[i].ifunc)
			continue;
		if (n < max)
			names[n] = ci->syms[i].name;
		n++;
	}
	return n;
}

bool code_image_is_start(const struct code_image *ci, uint64_t vaddr)
{
	return bsearch(&vaddr, ci->starts, ci->nr_starts, sizeof(*ci->starts), u64_cmp) != NULL;
}

const struct fde_range *code_image_fde(const struct code_image *ci, uint64_t vaddr)
{
	return fde_range_find(ci->fdes, ci->nr_fdes, vaddr);
}
