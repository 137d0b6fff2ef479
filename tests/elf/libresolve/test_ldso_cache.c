// SPDX-License-Identifier: GPL-2.0-only
/* The ld.so cache parser on the real cache, on hand-built ones and on damaged copies. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "elf/ldso_cache.h"

#define REAL_CACHE	"/etc/ld.so.cache"
#define NEW_HDR_SZ	48
#define NEW_ENTRY_SZ	24
#define OLD_HDR_SZ	16
#define OLD_ENTRY_SZ	12

/* What the callback saw; every string it gets must lie inside [buf, buf + sz). */
struct seen {
	const unsigned char *buf;
	size_t sz;
	size_t cnt;
	size_t host_cnt;
	int stop_after;		/* return 7 after this many entries; 0: never */
	char first_key[64];
	char libz_value[256];
	uint64_t last_hwcap;
};

static void assert_inside(const struct seen *s, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;

	assert_true(p >= s->buf && p < s->buf + s->sz);
	assert_non_null(memchr(p, '\0', s->buf + s->sz - p));
}

static int on_entry(const struct ldso_cache_entry *e, void *ctx)
{
	struct seen *s = ctx;

	assert_inside(s, e->key);
	assert_inside(s, e->value);
	if (s->cnt == 0)
		snprintf(s->first_key, sizeof(s->first_key), "%s", e->key);
	s->cnt++;
	s->last_hwcap = e->hwcap;
	if (ldso_cache__host_flags(e->flags)) {
		s->host_cnt++;
		if (strcmp(e->key, "libz.so.1") == 0)
			snprintf(s->libz_value, sizeof(s->libz_value), "%s", e->value);
	}
	if (s->stop_after && s->cnt == (size_t)s->stop_after)
		return 7;
	return 0;
}

static int parse(const void *buf, size_t sz, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	s->buf = buf;
	s->sz = sz;
	return ldso_cache__parse(buf, sz, on_entry, s);
}

static unsigned char *read_all(const char *path, size_t *sz)
{
	unsigned char *buf;
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size <= 0 || !(buf = malloc(st.st_size))) {
		close(fd);
		return NULL;
	}
	n = read(fd, buf, st.st_size);
	close(fd);
	if (n != st.st_size) {
		free(buf);
		return NULL;
	}
	*sz = n;
	return buf;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

struct syn_entry {
	uint32_t flags, key, value;
	uint64_t hwcap;
};

/*
 * A new-format cache at buf + at: header, entries, then strs. Entry offsets
 * are relative to strs; the helper adds the header and table, as ldconfig
 * writes them, unless raw (hostile offsets are used as given).
 */
static size_t put_new(unsigned char *buf, size_t at, uint32_t nlibs, const struct syn_entry *e,
		      size_t n, const char *strs, size_t strs_sz, bool raw)
{
	unsigned char *h = buf + at;
	size_t base = NEW_HDR_SZ + n * NEW_ENTRY_SZ, i;

	memset(h, 0, base);
	memcpy(h, "glibc-ld.so.cache1.1", 20);
	put_u32(h + 20, nlibs);
	put_u32(h + 24, strs_sz);
	h[28] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3;
	for (i = 0; i < n; i++) {
		unsigned char *p = h + NEW_HDR_SZ + i * NEW_ENTRY_SZ;

		put_u32(p, e[i].flags);
		put_u32(p + 4, raw ? e[i].key : e[i].key + base);
		put_u32(p + 8, raw ? e[i].value : e[i].value + base);
		put_u64(p + 16, e[i].hwcap);
	}
	memcpy(h + base, strs, strs_sz);
	return at + base + strs_sz;
}

/* "libx.so.1\0/lib/libx.so.1\0liby.so.2\0/lib/liby.so.2\0" */
static const char strs[] = "libx.so.1\0/lib/libx.so.1\0liby.so.2\0/lib/liby.so.2";
static const struct syn_entry two[] = {
	{ .flags = LDSO_FLAG_ELF_LIBC6, .key = 0, .value = 10 },
	{ .flags = LDSO_FLAG_ELF_LIBC6, .key = 25, .value = 35, .hwcap = 1ull << 62 },
};

static void test_real_cache(void **state)
{
	unsigned char *buf;
	struct seen s;
	size_t sz;

	(void)state;
	buf = read_all(REAL_CACHE, &sz);
	if (!buf)
		skip();
	assert_int_equal(parse(buf, sz, &s), 0);
	assert_true(s.cnt > 0);
	assert_true(s.host_cnt > 0);
	/* A new-format-only cache: every entry of its table is well formed. */
	if (memcmp(buf, "glibc-ld.so.cache1.1", 20) == 0) {
		uint32_t nlibs;

		memcpy(&nlibs, buf + 20, sizeof(nlibs));
		assert_int_equal(s.cnt, nlibs);
	}
	/* zlib is a build dependency: its runtime library is in the cache. */
	assert_non_null(strstr(s.libz_value, "/libz.so.1"));
	assert_int_equal(s.libz_value[0], '/');
	free(buf);
}

static int count_only(const struct ldso_cache_entry *e, void *ctx)
{
	(void)e;
	(*(size_t *)ctx)++;
	return 0;
}

static void test_parse_file(void **state)
{
	char tmpl[] = "/tmp/dlprof-ldso-XXXXXX";
	size_t cnt = 0;
	int fd;

	(void)state;
	if (access(REAL_CACHE, R_OK) == 0) {
		assert_int_equal(ldso_cache__parse_file(REAL_CACHE, count_only, &cnt), 0);
		assert_true(cnt > 0);
	}
	assert_int_equal(ldso_cache__parse_file("/nonexistent/ld.so.cache", count_only, &cnt),
			 -ENOENT);
	assert_int_equal(ldso_cache__parse_file("/", count_only, &cnt), -EINVAL);
	fd = mkstemp(tmpl);
	assert_true(fd >= 0);
	close(fd);
	cnt = 0;
	assert_int_equal(ldso_cache__parse_file(tmpl, count_only, &cnt), -EINVAL);
	assert_int_equal(cnt, 0);
	unlink(tmpl);
}

/* Every prefix of the real cache: no read past the end, and a short table is refused whole. */
static void test_truncated(void **state)
{
	unsigned char *real, *buf;
	size_t sz, len, step;
	struct seen s;
	int err;

	(void)state;
	real = read_all(REAL_CACHE, &sz);
	if (!real)
		skip();
	for (len = 0; len <= sz; len += step) {
		step = len < 4096 ? 1 : 61;
		/* An exact-size heap copy, so ASan sees any overread. */
		buf = malloc(len ? len : 1);
		assert_non_null(buf);
		memcpy(buf, real, len);
		err = parse(buf, len, &s);
		assert_true(err == 0 || err == -EINVAL);
		if (len < NEW_HDR_SZ)
			assert_int_equal(err, -EINVAL);
		free(buf);
	}
	free(real);
}

static uint32_t rnd(uint64_t *st)
{
	/* xorshift64*: a fixed seed keeps failures reproducible. */
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return (uint32_t)((*st * 2685821657736338717ull) >> 32);
}

static void test_mutated(void **state)
{
	static const uint32_t hostile[] = { 0, 1, 0x7fffffff, 0x80000000, 0xffffffff, 0xfffffff0 };
	unsigned char *real, *buf;
	uint64_t seed = 0x5eed1234abcdull;
	size_t sz, table_end, off;
	struct seen s;
	int i, j, err;

	(void)state;
	real = read_all(REAL_CACHE, &sz);
	if (!real)
		skip();
	buf = malloc(sz);
	assert_non_null(buf);
	table_end = sz < 4096 ? sz : 4096;
	for (i = 0; i < 3000; i++) {
		memcpy(buf, real, sz);
		for (j = 0; j < 6; j++) {
			/* Mostly the header and table, where offsets live. */
			off = rnd(&seed) % table_end;
			if (rnd(&seed) & 1)
				buf[off] = rnd(&seed);
			else if (off + 4 <= sz)
				put_u32(buf + off, i % 2 ? hostile[rnd(&seed) % 6] : (uint32_t)(sz - rnd(&seed) % 8));
		}
		err = parse(buf, sz, &s);
		assert_true(err == 0 || err == -EINVAL);
	}
	/* Garbage after a valid magic, and garbage without one. */
	for (i = 0; i < 500; i++) {
		size_t gsz = 1 + rnd(&seed) % 4096;
		unsigned char *gb = malloc(gsz);

		assert_non_null(gb);
		for (off = 0; off < gsz; off++)
			gb[off] = rnd(&seed);
		if (i % 2 && gsz >= 20)
			memcpy(gb, "glibc-ld.so.cache1.1", 20);
		else if (i % 4 == 0 && gsz >= 11)
			memcpy(gb, "ld.so-1.7.0", 11);
		err = parse(gb, gsz, &s);
		assert_true(err == 0 || err == -EINVAL);
		free(gb);
	}
	free(buf);
	free(real);
}

static void test_synthetic_new(void **state)
{
	unsigned char buf[512];
	struct seen s;
	size_t sz;

	(void)state;
	sz = put_new(buf, 0, 2, two, 2, strs, sizeof(strs), false);
	assert_int_equal(parse(buf, sz, &s), 0);
	assert_int_equal(s.cnt, 2);
	assert_string_equal(s.first_key, "libx.so.1");
	assert_int_equal(s.last_hwcap, 1ull << 62);

	/* A callback's non-zero return stops the walk and comes back. */
	memset(&s, 0, sizeof(s));
	s.buf = buf;
	s.sz = sz;
	s.stop_after = 1;
	assert_int_equal(ldso_cache__parse(buf, sz, on_entry, &s), 7);
	assert_int_equal(s.cnt, 1);

	/* The other byte order: refused, as ld.so refuses it. */
	buf[28] = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 3 : 2;
	assert_int_equal(parse(buf, sz, &s), -EINVAL);
	/* Written before glibc 2.33 recorded the byte order: taken. */
	buf[28] = 0;
	assert_int_equal(parse(buf, sz, &s), 0);
	assert_int_equal(s.cnt, 2);

	/* Wrong version, wrong magic. */
	memcpy(buf + 17, "1.0", 3);
	assert_int_equal(parse(buf, sz, &s), -EINVAL);
	memcpy(buf, "xlibc", 5);
	assert_int_equal(parse(buf, sz, &s), -EINVAL);

	assert_int_equal(ldso_cache__parse(NULL, 0, on_entry, &s), -EINVAL);
	assert_int_equal(ldso_cache__parse(buf, sz, NULL, NULL), -EINVAL);
}

static void test_hostile_offsets(void **state)
{
	const size_t n = 6, base = NEW_HDR_SZ + n * NEW_ENTRY_SZ;
	/* The last string is left unterminated at the very end of the buffer. */
	static const char hs[] = "libok.so.1\0/lib/libok.so.1\0/lib/unterminated";
	const size_t hs_sz = sizeof(hs) - 1, sz = base + hs_sz;
	struct syn_entry e[6] = {
		{ LDSO_FLAG_ELF_LIBC6, base + 0, base + 11, 0 },	/* the good one */
		{ LDSO_FLAG_ELF_LIBC6, 0xffffffff, base + 11, 0 },
		{ LDSO_FLAG_ELF_LIBC6, base + 0, (uint32_t)sz, 0 },	/* one past the end */
		{ LDSO_FLAG_ELF_LIBC6, base + 0, base + 27, 0 },	/* no NUL before the end */
		{ LDSO_FLAG_ELF_LIBC6, (uint32_t)(sz - 1), base + 11, 0 },
		{ LDSO_FLAG_ELF_LIBC6, 0x80000000, 0x7fffffff, 0 },
	};
	unsigned char *buf = malloc(sz);
	struct seen s;

	(void)state;
	assert_non_null(buf);
	assert_int_equal(put_new(buf, 0, n, e, n, hs, hs_sz, true), sz);
	assert_int_equal(parse(buf, sz, &s), 0);
	assert_int_equal(s.cnt, 1);
	assert_string_equal(s.first_key, "libok.so.1");

	/* A table longer than the file: the whole cache is refused, nothing read. */
	put_u32(buf + 20, (sz - NEW_HDR_SZ) / NEW_ENTRY_SZ + 1);
	assert_int_equal(parse(buf, sz, &s), -EINVAL);
	assert_int_equal(s.cnt, 0);
	put_u32(buf + 20, 0xffffffff);
	assert_int_equal(parse(buf, sz, &s), -EINVAL);
	put_u32(buf + 20, 0);
	assert_int_equal(parse(buf, sz, &s), 0);
	assert_int_equal(s.cnt, 0);
	free(buf);
}

/* The old "ld.so-1.7.0" header and table at buf; returns where it ends. */
static size_t put_old(unsigned char *buf, uint32_t nlibs, const struct syn_entry *e, size_t n)
{
	size_t i;

	memset(buf, 0, OLD_HDR_SZ + n * OLD_ENTRY_SZ);
	memcpy(buf, "ld.so-1.7.0", 11);
	put_u32(buf + 12, nlibs);
	for (i = 0; i < n; i++) {
		put_u32(buf + OLD_HDR_SZ + i * OLD_ENTRY_SZ, e[i].flags);
		put_u32(buf + OLD_HDR_SZ + i * OLD_ENTRY_SZ + 4, e[i].key);
		put_u32(buf + OLD_HDR_SZ + i * OLD_ENTRY_SZ + 8, e[i].value);
	}
	return OLD_HDR_SZ + n * OLD_ENTRY_SZ;
}

static void test_old_format(void **state)
{
	unsigned char buf[512];
	struct seen s;
	size_t end;

	(void)state;
	/* Old only: strings are offsets from the end of the table. */
	end = put_old(buf, 2, two, 2);
	memcpy(buf + end, strs, sizeof(strs));
	assert_int_equal(parse(buf, end + sizeof(strs), &s), 0);
	assert_int_equal(s.cnt, 2);
	assert_string_equal(s.first_key, "libx.so.1");
	assert_int_equal(s.last_hwcap, 0);

	put_u32(buf + 12, 1000);
	assert_int_equal(parse(buf, end + sizeof(strs), &s), -EINVAL);
}

static void test_old_then_new(void **state)
{
	static const char nstrs[] = "libnew.so.7\0/lib/libnew.so.7";
	static const struct syn_entry ne[] = { { LDSO_FLAG_ELF_LIBC6, 0, 12, 0 } };
	const struct syn_entry three[] = { two[0], two[1], two[0] };
	unsigned char buf[1024];
	size_t end, at, sz;
	struct seen s;

	(void)state;
	/* 3 old entries end at 52: the new header starts 8-aligned, at 56. */
	end = put_old(buf, 3, three, 3);
	assert_int_equal(end, 52);
	at = (end + 7) & ~(size_t)7;
	memset(buf + end, 0, at - end);
	sz = put_new(buf, at, 1, ne, 1, nstrs, sizeof(nstrs), false);
	assert_int_equal(parse(buf, sz, &s), 0);
	/* Only the new table counts, with offsets from the new header. */
	assert_int_equal(s.cnt, 1);
	assert_string_equal(s.first_key, "libnew.so.7");

	/* A new table cut short behind an old one: refused, not read past. */
	assert_int_equal(parse(buf, at + NEW_HDR_SZ + 4, &s), -EINVAL);
}

static void test_host_flags(void **state)
{
	(void)state;
#if defined(__x86_64__) && !defined(__ILP32__)
	assert_true(ldso_cache__host_flags(0x0303));
	assert_false(ldso_cache__host_flags(0x0003));	/* i386, in /lib32 */
	assert_false(ldso_cache__host_flags(0x0803));	/* x32 */
	assert_false(ldso_cache__host_flags(0x0a03));	/* aarch64 */
#endif
#ifdef LDSO_CACHE_HOST_FLAGS
	assert_true(ldso_cache__host_flags(LDSO_CACHE_HOST_FLAGS));
#endif
	assert_false(ldso_cache__host_flags(0x0002));	/* libc5 */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_cache),
		cmocka_unit_test(test_parse_file),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutated),
		cmocka_unit_test(test_synthetic_new),
		cmocka_unit_test(test_hostile_offsets),
		cmocka_unit_test(test_old_format),
		cmocka_unit_test(test_old_then_new),
		cmocka_unit_test(test_host_flags),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
