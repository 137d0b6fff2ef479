/* SPDX-License-Identifier: GPL-2.0-only */
/* Symbol names as people read them: C++ (Itanium ABI) and Rust (legacy and v0). */
#ifndef DLPROF_DEMANGLE_H
#define DLPROF_DEMANGLE_H

/*
 * The demangled form of the symbol sym (a "@VERSION" suffix kept as it
 * is), malloc'ed; NULL when sym is no mangled name (C, garbage) or demangles
 * to itself. Rust legacy names lose their "::h<hash>" part, as rustc prints them.
 */
char *demangle(const char *sym);

#endif /* DLPROF_DEMANGLE_H */
