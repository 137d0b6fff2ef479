/* SPDX-License-Identifier: GPL-2.0-only */
/* Which functions a shared library defines, and where a uprobe must go. */
#ifndef DLPROF_ELF_SYMBOLS_H
#define DLPROF_ELF_SYMBOLS_H

#include <stdbool.h>
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
	bool can_throw;		/* imports __cxa_throw or _Unwind_*, or has .gcc_except_table: unwinding may cross it */
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

/* Free one entry's names and zero it (the entry itself is not freed); NULL-safe. */
void elf_func__clear(struct elf_func *f);

/* True when name or one of the aliases matches the fnmatch(3) pattern. */
int elf_func__matches(const struct elf_func *f, const char *pattern);

/*
 * Replace each IFUNC's resolver address with the implementation the
 * dynamic linker picks on this machine, found by dlopen()+dlsym() in a
 * forked helper process so the profiler itself runs none of the library's
 * code. Entries that cannot be resolved (local IFUNCs, dlopen failure) are
 * removed and counted in *unresolved. Entries that land on an address
 * another entry already has are merged into it (names become aliases).
 * Also removed: IFUNCs whose implementation lies in another object (libc's
 * time() resolves into the vDSO), and all of them when the helper crashes
 * or does not answer within 30 s. Calling it again is a no-op.
 * Returns 0 or -errno.
 */
int ifunc_resolve(const char *path, struct elf_func_list *list, size_t *unresolved);

/*
 * Sort list by file_offset and merge the entries that share one: the
 * preferred entry keeps its name (a resolved IFUNC, then a .dynsym name,
 * GLOBAL over WEAK over LOCAL, a name without '.', the shorter, the
 * alphabetically first), the names of the others become its aliases, flags
 * are or-ed. Every entry ends with a non-NULL aliases array. Shared by
 * elf_funcs__load() and ifunc_resolve(). Returns 0 or -ENOMEM (the list
 * then holds every name still, maybe not merged yet).
 */
int elf_funcs__normalize(struct elf_func_list *list);

/* The PT_LOAD program headers of an ELF file: vaddr -> file offset. */
struct elf_segs;

/* Returns 0 or the errors of elf_funcs__load(). */
int elf_segs__load(const char *path, struct elf_segs **out);
void elf_segs__free(struct elf_segs *segs);

/*
 * File offset of vaddr through the PT_LOAD that holds it in the file
 * (executable segments first). Returns 0 or -ENOENT when no segment does.
 */
int elf_segs__offset(const struct elf_segs *segs, uint64_t vaddr, uint64_t *offset);

#endif /* DLPROF_ELF_SYMBOLS_H */
