/* SPDX-License-Identifier: GPL-2.0-only */
/* Read glibc's ld.so cache (/etc/ld.so.cache) without trusting it. */
#ifndef DLPROF_LDSO_CACHE_H
#define DLPROF_LDSO_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What this arch's dynamic linker calls its own: the cache entry flags it
 * accepts (glibc's _DL_CACHE_DEFAULT_ID, elf/cache.h and sysdeps/.../dl-cache.h)
 * and Debian's multiarch directory name. An arch missing here accepts every
 * libc6 entry and has no multiarch directories.
 */
#define LDSO_FLAG_TYPE_MASK	0x00ff
#define LDSO_FLAG_ELF		0x0001
#define LDSO_FLAG_ELF_LIBC6	0x0003

#if defined(__x86_64__) && defined(__ILP32__)
#define LDSO_CACHE_HOST_FLAGS	(0x0800 /* FLAG_X8664_LIBX32 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"x86_64-linux-gnux32"
#elif defined(__x86_64__)
#define LDSO_CACHE_HOST_FLAGS	(0x0300 /* FLAG_X8664_LIB64 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"x86_64-linux-gnu"
#elif defined(__i386__)
#define LDSO_CACHE_HOST_FLAGS	LDSO_FLAG_ELF_LIBC6
#define LDSO_MULTIARCH		"i386-linux-gnu"
#elif defined(__aarch64__) && defined(__LP64__)
#define LDSO_CACHE_HOST_FLAGS	(0x0a00 /* FLAG_AARCH64_LIB64 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"aarch64-linux-gnu"
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LDSO_CACHE_HOST_FLAGS	(0x0500 /* FLAG_POWERPC_LIB64 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"powerpc64le-linux-gnu"
#elif defined(__powerpc64__)
#define LDSO_CACHE_HOST_FLAGS	(0x0500 /* FLAG_POWERPC_LIB64 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"powerpc64-linux-gnu"
#elif defined(__s390x__)
#define LDSO_CACHE_HOST_FLAGS	(0x0400 /* FLAG_S390_LIB64 */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"s390x-linux-gnu"
#elif defined(__riscv) && __riscv_xlen == 64 && defined(__riscv_float_abi_double)
#define LDSO_CACHE_HOST_FLAGS	(0x1000 /* FLAG_RISCV_FLOAT_ABI_DOUBLE */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"riscv64-linux-gnu"
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
#define LDSO_CACHE_HOST_FLAGS	(0x0900 /* FLAG_ARM_LIBHF */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"arm-linux-gnueabihf"
#elif defined(__loongarch64) && defined(__loongarch_double_float)
#define LDSO_CACHE_HOST_FLAGS	(0x1200 /* FLAG_LARCH_FLOAT_ABI_DOUBLE */ | LDSO_FLAG_ELF_LIBC6)
#define LDSO_MULTIARCH		"loongarch64-linux-gnu"
#endif

struct ldso_cache_entry {
	const char *key;	/* soname, NUL-terminated inside the cache buffer */
	const char *value;	/* the file ld.so would open */
	uint32_t flags;		/* LDSO_FLAG_* type | arch bits */
	uint64_t hwcap;		/* 0 for the baseline entry of a soname */
};

/* Return non-zero to stop the walk; ldso_cache__parse() returns that value. */
typedef int (*ldso_cache_entry_fn)(const struct ldso_cache_entry *e, void *ctx);

/*
 * Call fn for each entry of the cache image buf[0..sz), in file order, for
 * every arch (filter with ldso_cache__host_flags()). Accepts the new format
 * ("glibc-ld.so.cache1.1"), alone or after an old "ld.so-1.7.0" table, and
 * the old format alone. Entries whose strings fall outside buf or are not
 * NUL-terminated inside it are skipped, as ld.so skips them.
 * Returns 0, -EINVAL when the header is not a cache of this byte order or
 * its table does not fit in sz, or what fn returned.
 */
int ldso_cache__parse(const void *buf, size_t sz, ldso_cache_entry_fn fn, void *ctx);

/* ldso_cache__parse() on a file's contents; -errno when it cannot be read. */
int ldso_cache__parse_file(const char *path, ldso_cache_entry_fn fn, void *ctx);

/* Whether this arch's ld.so would use an entry with these flags. */
bool ldso_cache__host_flags(uint32_t flags);

#endif /* DLPROF_LDSO_CACHE_H */
