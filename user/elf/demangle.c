// SPDX-License-Identifier: GPL-2.0-only
/*
 * libiberty's demangler, the one binutils (nm -C, objdump -C) and GDB use,
 * rather than the C++ runtime's abi::__cxa_demangle: one call demangles
 * C++ and both Rust manglings (legacy _ZN...17h<hash>E and v0 _R...),
 * where __cxa_demangle knows only C++, reads Rust legacy names as C++
 * (keeping the hash) and refuses v0; and it keeps the profiler a C program
 * with no C++ runtime to link. Its allocations abort on out-of-memory
 * (xmalloc); the names it is given are symbol names, a few KiB at most.
 */
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "elf/demangle.h"

/* DMGL_AUTO: Rust first (its legacy names are valid C++ names too), then C++. */
#define DEMANGLE_FLAGS (DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO)

static char *demangle_whole(const char *sym)
{
	char *d = cplus_demangle(sym, DEMANGLE_FLAGS);

	if (d && !strcmp(d, sym)) {
		free(d);
		return NULL;
	}
	return d;
}

char *demangle(const char *sym)
{
	const char *at = strchr(sym, '@');
	char *base, *d, *out;
	size_t len;

	if (!at)
		return demangle_whole(sym);
	/* A symbol version (memcpy@GLIBC_2.2.5) is no part of the mangling. */
	base = strndup(sym, (size_t)(at - sym));
	if (!base)
		return NULL;
	d = demangle_whole(base);
	free(base);
	if (!d)
		return NULL;
	len = strlen(d);
	out = realloc(d, len + strlen(at) + 1);
	if (!out) {
		free(d);
		return NULL;
	}
	strcpy(out + len, at);
	return out;
}
