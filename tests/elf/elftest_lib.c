/* SPDX-License-Identifier: GPL-2.0-only */
/* One of each kind of function symbol that elf_funcs__load() must sort out. */
#include <stdlib.h>

/* No inlining, cloning (foo.isra.0) or folding: each function keeps its own symbol and address. */
#define TL_FUNC __attribute__((noipa))

typedef int tl_fn(int);

TL_FUNC int tl_global(int x)
{
	return x + 1;
}

/* A strong name and a weak alias at one address. */
TL_FUNC int __tl_strong(int x)
{
	return x * 3;
}
int tl_weak(int x) __attribute__((weak, alias("__tl_strong")));

/* Not exported: only the unstripped .symtab has it. */
__attribute__((visibility("hidden"))) TL_FUNC int tl_hidden(int x)
{
	return x * 5;
}

TL_FUNC int tl_call_hidden(int x)
{
	return tl_hidden(x) + 1;
}

/* What gcc makes for calls that cannot be interposed: a local FUNC alias named with a '.'. */
TL_FUNC int tl_aliased(int x)
{
	return x - 7;
}
__asm__(".set tl_aliased.localalias, tl_aliased\n\t"
	".type tl_aliased.localalias, @function\n");

/*
 * What gcc's splitting and cloning leave in .symtab, one instruction each:
 * cold fragments (jumped to from their function, never called) and
 * clones and split-off parts (called like any function).
 */
#define TL_LOCAL_FUNC(name) ".type " name ", @function\n" name ":\n\tret\n\t.size " name ", 1\n"
__asm__(".text\n"
	TL_LOCAL_FUNC("tl_split.cold")
	TL_LOCAL_FUNC("tl_split.cold.3")
	TL_LOCAL_FUNC("tl_split.part.0.cold")
	TL_LOCAL_FUNC("tl_split.isra.0.cold")
	TL_LOCAL_FUNC("tl_split.part.0")
	TL_LOCAL_FUNC("tl_split.isra.0")
	TL_LOCAL_FUNC("tl_split.constprop.0")
	TL_LOCAL_FUNC("tl_split.lto_priv.0")
	TL_LOCAL_FUNC("tl_split.coldest")
	TL_LOCAL_FUNC("tl_split.cold.x"));

/* Neighbours that must stay two entries. */
TL_FUNC int tl_distinct_1(int x)
{
	return x ^ 0x11;
}

TL_FUNC int tl_distinct_2(int x)
{
	return x ^ 0x22;
}

static TL_FUNC int tl_impl_a(int x)
{
	return x + 100;
}

static TL_FUNC int tl_impl_b(int x)
{
	return x + 200;
}

/* The environment lets a test check that the resolver's own choice is what it gets. */
static tl_fn *tl_resolver(void)
{
	return getenv("ELFTEST_IFUNC_B") ? tl_impl_b : tl_impl_a;
}

int tl_ifunc(int x) __attribute__((ifunc("tl_resolver")));

/* A local IFUNC: only .symtab names it, so dlsym() cannot resolve it. */
static tl_fn *tl_local_resolver(void)
{
	return tl_impl_b;
}

static int tl_local_ifunc(int x) __attribute__((ifunc("tl_local_resolver")));

TL_FUNC int tl_call_local_ifunc(int x)
{
	return tl_local_ifunc(x);
}
