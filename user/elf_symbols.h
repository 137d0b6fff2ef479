/* SPDX-License-Identifier: GPL-2.0-only */
/* Which functions a shared library defines, and where a uprobe must go. */
#ifndef DLPROF_ELF_SYMBOLS_H
#define DLPROF_ELF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

enum elf_func_flags {
	ELF_FUNC_GLOBAL		= 1u << 0,	/* some name is STB_GLOBAL */
	ELF_FUNC_WEAK		= 1u << 1,	/* some name is STB_WEAK */
	ELF_FUNC_LOCAL		= 1u << 2,	/* only local names (.symtab) */
	ELF_FUNC_DYNAMIC	= 1u << 3,	/* some name is in .dynsym (exported) */
	ELF_FUNC_IFUNC		= 1u << 4,	/* name was STT_GNU_IFUNC */
	ELF_FUNC_IFUNC_RESOLVED	= 1u << 5,	/* vaddr is the implementation, not the resolver */
};

/* One probe site: every symbol at one address collapses into one entry. */
struct elf_func {
	char *name;		/* preferred name: dynsym over symtab, global over weak over local, no '.' suffix */
	char **aliases;		/* the other names at this address (NULL-terminated, may be empty) */
	uint64_t vaddr;		/* st_value (of the implementation once an IFUNC is resolved) */
	uint64_t size;		/* st_size; 0 when the symbol does not say */
	uint64_t file_offset;	/* vaddr mapped through the PT_LOAD program headers: what a uprobe takes */
	unsigned int flags;	/* enum elf_func_flags */
};

struct elf_func_list {
	struct elf_func *funcs;	/* sorted by file_offset, unique offsets */
	size_t cnt;
	char build_id[41];	/* hex NT_GNU_BUILD_ID, "" when absent */
};

/*
 * Read every defined function symbol (STT_FUNC and STT_GNU_IFUNC, from
 * .dynsym and, when present, .symtab) of the ELF file at path.
 * IFUNC symbols keep the resolver's address here: see ifunc_resolve().
 * Returns 0, -ENOENT/-EACCES from open, -ENOEXEC for a file that is not
 * a well-formed ELF shared object or executable of this machine.
 */
int elf_funcs__load(const char *path, struct elf_func_list *out);
void elf_funcs__free(struct elf_func_list *list);

/* True when name or one of the aliases matches the fnmatch(3) pattern. */
int elf_func__matches(const struct elf_func *f, const char *pattern);

/*
 * Replace each IFUNC's resolver address with the implementation the
 * dynamic linker picks on this machine, found by dlopen()+dlsym() in a
 * forked helper process so the profiler itself runs none of the library's
 * code. Entries that cannot be resolved (local IFUNCs, dlopen failure) are
 * removed and counted in *unresolved. Entries that land on an address
 * another entry already has are merged into it (names become aliases).
 * Returns 0 or -errno.
 */
int ifunc_resolve(const char *path, struct elf_func_list *list, size_t *unresolved);

#endif /* DLPROF_ELF_SYMBOLS_H */
