// SPDX-License-Identifier: GPL-2.0-only
/* glibc's ld.so cache, laid out as in glibc's sysdeps/generic/dl-cache.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/ldso_cache.h"

#define OLD_MAGIC		"ld.so-1.7.0"
#define OLD_HDR_SZ		16	/* magic[11], pad to 4, uint32 nlibs */
#define OLD_NLIBS_OFF		12
#define OLD_ENTRY_SZ		12	/* int32 flags, uint32 key, uint32 value */

#define NEW_MAGIC		"glibc-ld.so.cache"
#define NEW_VERSION		"1.1"
#define NEW_HDR_SZ		48
#define NEW_NLIBS_OFF		20
#define NEW_FLAGS_OFF		28	/* byte order the cache was written in */
#define NEW_ENTRY_SZ		24	/* flags, key, value, osversion, uint64 hwcap */
#define NEW_ALIGN		8	/* alignof(struct cache_file_new), for the table after an old one */

#define NEW_ENDIAN_MASK		0x3
#define NEW_ENDIAN_UNSET	0	/* written by glibc < 2.33: assume ours */
#define NEW_ENDIAN_LITTLE	2
#define NEW_ENDIAN_BIG		3

/* A real cache holds one entry per installed library; anything far larger is not one and must not exhaust memory. */
#define CACHE_MAX_SZ		(64u << 20)

/* Reads through memcpy: test buffers and the old+new layout need not be aligned. */
static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* A string at strtab + off, NUL-terminated before strtab + strtab_sz; NULL when not. */
static const char *cache_str(const unsigned char *strtab, size_t strtab_sz, uint32_t off)
{
	if (off >= strtab_sz)
		return NULL;
	if (!memchr(strtab + off, '\0', strtab_sz - off))
		return NULL;
	return (const char *)strtab + off;
}

static int walk_entries(const unsigned char *table, size_t nlibs, size_t entry_sz,
			const unsigned char *strtab, size_t strtab_sz,
			ldso_cache_entry_fn fn, void *ctx)
{
	struct ldso_cache_entry e;
	const unsigned char *p;
	size_t i;
	int err;

	for (i = 0; i < nlibs; i++) {
		p = table + i * entry_sz;
		e.flags = get_u32(p);
		e.key = cache_str(strtab, strtab_sz, get_u32(p + 4));
		e.value = cache_str(strtab, strtab_sz, get_u32(p + 8));
		e.hwcap = entry_sz == NEW_ENTRY_SZ ? get_u64(p + 16) : 0;
		if (!e.key || !e.value)
			continue;
		err = fn(&e, ctx);
		if (err)
			return err;
	}
	return 0;
}

static bool new_endian_ok(unsigned char flags)
{
	unsigned int endian = flags & NEW_ENDIAN_MASK;

	if (endian == NEW_ENDIAN_UNSET)
		return true;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return endian == NEW_ENDIAN_LITTLE;
#else
	return endian == NEW_ENDIAN_BIG;
#endif
}

static bool has_new_magic(const unsigned char *p, size_t avail)
{
	return avail >= NEW_HDR_SZ &&
	       memcmp(p, NEW_MAGIC, strlen(NEW_MAGIC)) == 0 &&
	       memcmp(p + strlen(NEW_MAGIC), NEW_VERSION, strlen(NEW_VERSION)) == 0;
}

/* New-format strings are offsets from the start of the new header. */
static int parse_new(const unsigned char *hdr, size_t avail, ldso_cache_entry_fn fn, void *ctx)
{
	size_t nlibs = get_u32(hdr + NEW_NLIBS_OFF);

	if (!new_endian_ok(hdr[NEW_FLAGS_OFF]))
		return -EINVAL;
	/* Divide rather than multiply: nlibs * 24 may wrap a 32-bit size_t. */
	if (nlibs > (avail - NEW_HDR_SZ) / NEW_ENTRY_SZ)
		return -EINVAL;
	return walk_entries(hdr + NEW_HDR_SZ, nlibs, NEW_ENTRY_SZ, hdr, avail, fn, ctx);
}

int ldso_cache__parse(const void *buf, size_t sz, ldso_cache_entry_fn fn, void *ctx)
{
	const unsigned char *p = buf;
	size_t nlibs, old_end, new_off;

	if (!p || !fn)
		return -EINVAL;
	if (has_new_magic(p, sz))
		return parse_new(p, sz, fn, ctx);

	if (sz < OLD_HDR_SZ || memcmp(p, OLD_MAGIC, strlen(OLD_MAGIC)) != 0)
		return -EINVAL;
	nlibs = get_u32(p + OLD_NLIBS_OFF);
	if (nlibs > (sz - OLD_HDR_SZ) / OLD_ENTRY_SZ)
		return -EINVAL;
	old_end = OLD_HDR_SZ + nlibs * OLD_ENTRY_SZ;

	/* ldconfig's "compat" layout: ld.so ignores the old table when a new one follows. */
	new_off = (old_end + NEW_ALIGN - 1) & ~(size_t)(NEW_ALIGN - 1);
	if (new_off < sz && has_new_magic(p + new_off, sz - new_off))
		return parse_new(p + new_off, sz - new_off, fn, ctx);

	/* Old-format strings are offsets from the end of the old table. */
	return walk_entries(p + OLD_HDR_SZ, nlibs, OLD_ENTRY_SZ, p + old_end, sz - old_end, fn, ctx);
}

int ldso_cache__parse_file(const char *path, ldso_cache_entry_fn fn, void *ctx)
{
	unsigned char *buf = NULL;
	size_t sz = 0;
	struct stat st;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto cleanup;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (unsigned long long)st.st_size > CACHE_MAX_SZ) {
		err = -EINVAL;
		goto cleanup;
	}
	buf = malloc(st.st_size);
	if (!buf) {
		err = -ENOMEM;
		goto cleanup;
	}
	/* ldconfig replaces the file by rename, so a short read only means a smaller image. */
	while (sz < (size_t)st.st_size) {
		n = read(fd, buf + sz, st.st_size - sz);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto cleanup;
		}
		if (n == 0)
			break;
		sz += n;
	}
	err = ldso_cache__parse(buf, sz, fn, ctx);
cleanup:
	free(buf);
	close(fd);
	return err;
}

bool ldso_cache__host_flags(uint32_t flags)
{
#ifdef LDSO_CACHE_HOST_FLAGS
#if defined(__x86_64__) || defined(__aarch64__)
	/* glibc's x86_64 and aarch64 ld.so accept only their own tag. */
	return flags == LDSO_CACHE_HOST_FLAGS;
#else
	/* Elsewhere ld.so also takes untagged ELF entries (generic _dl_cache_check_flags). */
	return flags == LDSO_CACHE_HOST_FLAGS || flags == LDSO_FLAG_ELF;
#endif
#else
	return (flags & LDSO_FLAG_TYPE_MASK) == LDSO_FLAG_ELF_LIBC6 || flags == LDSO_FLAG_ELF;
#endif
}
