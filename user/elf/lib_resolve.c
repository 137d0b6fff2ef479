// SPDX-License-Identifier: GPL-2.0-only
/* --lib argument → library files: the dynamic linker's search order, seen from a target. */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/ldso_cache.h"
#include "elf/elf_search_path.h"
#include "elf/image_layers.h"
#include "elf/lib_resolve.h"
#include "util/array.h"
#include "util/mount_ns.h"
#include "util/real_inode.h"

/* Linux's own limit on symlinks followed in one lookup (MAXSYMLINKS). */
#define MAX_SYMLINK_HOPS	40
#define ROOT_MAX		32	/* "/proc/<pid>/root" */
#define DELETED_SUFFIX		" (deleted)"

/*
 * Directories ld.so falls back to, Debian's multiarch ones first; the
 * order decides which copy an exact name finds.
 */
static const char *const std_dirs[] = {
#ifdef LDSO_MULTIARCH
	"/lib/" LDSO_MULTIARCH,
	"/usr/lib/" LDSO_MULTIARCH,
#endif
	"/lib64",
	"/usr/lib64",
	"/lib",
	"/usr/lib",
	"/usr/local/lib",
};

struct resolver {
	pid_t pid;
	pid_t target;		/* the pid lib_resolve was given: the files it should map */
	bool program;		/* also the program's own search path (lib_resolve_program) */
	const char *exe;	/* the program when pid is 0: its path; NULL: none */
	char root[ROOT_MAX];	/* prefix that opens the target's files: "" or "/proc/<pid>/root" */
	struct lib_list *out;
	size_t matched;		/* usable files the current search found, new or already in out */
	bool non_elf;		/* a regular file matched but was not ELF */
};

struct where_buf {
	char *buf;
	size_t sz;
	size_t len;
};

__attribute__((format(printf, 2, 3)))
static void where_add(struct where_buf *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!w || !w->buf || w->sz == 0 || w->len + 1 >= w->sz)
		return;
	if (w->len > 0) {
		n = snprintf(w->buf + w->len, w->sz - w->len, ", ");
		w->len = n < 0 ? w->len : w->len + (size_t)n;
		if (w->len + 1 >= w->sz) {
			w->len = w->sz - 1;
			return;
		}
	}
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, w->sz - w->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	w->len += (size_t)n;
	if (w->len >= w->sz)
		w->len = w->sz - 1;
}

static void path_pop(char *res, size_t *len)
{
	while (*len > 0 && res[*len - 1] != '/')
		(*len)--;
	if (*len > 0)
		(*len)--;
	res[*len] = '\0';
}

/*
 * Resolve every symlink of the absolute path as if root were "/", so that
 * a container's absolute links ("/lib" -> "/usr/lib") stay inside it: the
 * kernel would follow them from our own root once past /proc/PID/root.
 * out gets the path as the target sees it; root + out is symlink-free.
 */
static int canon_in_root(const char *root, const char *path, char *out, size_t out_sz)
{
	char todo[PATH_MAX], next[PATH_MAX], link[PATH_MAX], full[ROOT_MAX + PATH_MAX];
	size_t len = 0, comp_len;
	const char *comp, *rest;
	int hops = 0;
	struct stat st;
	ssize_t n;

	if (path[0] != '/' || out_sz < 2)
		return -EINVAL;
	if ((size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo))
		return -ENAMETOOLONG;
	out[0] = '\0';
	rest = todo;
	for (;;) {
		while (*rest == '/')
			rest++;
		if (!*rest)
			break;
		comp = rest;
		comp_len = strcspn(comp, "/");
		rest = comp + comp_len;
		if (comp_len == 1 && comp[0] == '.')
			continue;
		if (comp_len == 2 && comp[0] == '.' && comp[1] == '.') {
			path_pop(out, &len);
			continue;
		}
		if (len + 1 + comp_len >= out_sz)
			return -ENAMETOOLONG;
		out[len++] = '/';
		memcpy(out + len, comp, comp_len);
		len += comp_len;
		out[len] = '\0';

		if ((size_t)snprintf(full, sizeof(full), "%s%s", root, out) >= sizeof(full))
			return -ENAMETOOLONG;
		if (lstat(full, &st) < 0)
			return -errno;
		if (!S_ISLNK(st.st_mode))
			continue;
		if (++hops > MAX_SYMLINK_HOPS)
			return -ELOOP;
		n = readlink(full, link, sizeof(link));
		if (n < 0)
			return -errno;
		if ((size_t)n >= sizeof(link))
			return -ENAMETOOLONG;
		link[n] = '\0';
		path_pop(out, &len);
		if (link[0] == '/') {
			len = 0;
			out[0] = '\0';
		}
		if ((size_t)snprintf(next, sizeof(next), "%s/%s", link, rest) >= sizeof(next))
			return -ENAMETOOLONG;
		memcpy(todo, next, strlen(next) + 1);
		rest = todo;
	}
	if (len == 0)
		strcpy(out, "/");
	return 0;
}

static bool is_elf(const char *path)
{
	unsigned char ident[SELFMAG];
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, ident, sizeof(ident), 0);
	close(fd);
	return n == SELFMAG && memcmp(ident, ELFMAG, SELFMAG) == 0;
}

/* "start-end perms offset major:minor inode path": the address, device and inode of a maps line. */
static bool parse_maps_ids(const char *line, unsigned long *start, dev_t *dev, ino_t *ino)
{
	unsigned int major, minor;
	unsigned long long inode;

	if (sscanf(line, "%lx-%*x %*s %*x %x:%x %llu", start, &major, &minor, &inode) != 4)
		return false;
	*dev = makedev(major, minor);
	*ino = (ino_t)inode;
	return true;
}

int lib_file_mapped_by(pid_t pid, dev_t dev, ino_t ino)
{
	char maps[64], *line = NULL;
	size_t line_sz = 0;
	unsigned long start;
	dev_t d;
	ino_t i;
	int found = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!found && getline(&line, &line_sz, f) > 0)
		found = parse_maps_ids(line, &start, &d, &i) && d == dev && i == ino;
	free(line);
	fclose(f);
	return found;
}

static bool lib_list_has(const struct lib_list *list, dev_t dev, ino_t ino)
{
	size_t i;

	for (i = 0; i < list->cnt; i++) {
		if (list->libs[i].dev == dev && list->libs[i].ino == ino)
			return true;
	}
	return false;
}

static int lib_list_append(struct lib_list *list, const char *path, const char *display,
			   const struct stat *seen, dev_t dev, ino_t ino, pid_t ns_pid, pid_t target)
{
	struct lib_file *lib;

	lib = ARRAY_SLOT(list->libs, list->cnt);
	if (!lib)
		return -ENOMEM;
	lib->path = strdup(path);
	lib->display = strdup(display);
	if (!lib->path || !lib->display) {
		free(lib->path);
		free(lib->display);
		return -ENOMEM;
	}
	lib->dev = dev;
	lib->ino = ino;
	lib->seen_dev = seen->st_dev;
	lib->seen_ino = seen->st_ino;
	lib->ns_pid = ns_pid;
	lib->unmapped = target > 0 && lib_file_mapped_by(target, seen->st_dev, seen->st_ino) == 0;
	list->cnt++;
	return 0;
}

/* Keep display (a path as the target sees it) when it is an ELF file not yet in out. */
static int add_file(struct resolver *r, const char *display)
{
	char path[ROOT_MAX + PATH_MAX];
	struct stat st;
	dev_t dev;
	ino_t ino;

	if ((size_t)snprintf(path, sizeof(path), "%s%s", r->root, display) >= sizeof(path))
		return 0;
	/* stat follows links: uprobes attach to the inode the name ends at. */
	if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	/* /usr/lib/<triplet>/libc.so is a linker script, not something to probe. */
	if (!is_elf(path)) {
		r->non_elf = true;
		return 0;
	}
	if (real_inode_of(path, &dev, &ino) < 0)
		return 0;
	r->matched++;
	if (lib_list_has(r->out, dev, ino))
		return 0;
	return lib_list_append(r->out, path, display, &st, dev, ino, r->root[0] ? r->pid : 0, r->target);
}

static int search_maps(struct resolver *r, const char *pattern)
{
	char maps[64], *line = NULL, *p, *base;
	size_t line_sz = 0, len, sfx = strlen(DELETED_SUFFIX);
	FILE *f;
	int off, err = 0;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)r->pid);
	f = fopen(maps, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &line_sz, f) > 0) {
		len = strcspn(line, "\n");
		line[len] = '\0';
		/* address perms offset dev inode [path]: the path may hold spaces. */
		off = -1;
		if (sscanf(line, "%*s %*s %*s %*s %*s%n", &off) < 0 || off < 0)
			continue;
		p = line + off;
		while (*p == ' ')
			p++;
		if (*p != '/')
			continue;
		/* The file on disk is no longer the mapped one: probing it would miss. */
		len = strlen(p);
		if (len > sfx && strcmp(p + len - sfx, DELETED_SUFFIX) == 0)
			continue;
		base = strrchr(p, '/') + 1;
		if (fnmatch(pattern, base, 0) != 0)
			continue;
		err = add_file(r, p);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	return err;
}

static int search_dir(struct resolver *r, const char *dir, const char *pattern)
{
	char cdir[PATH_MAX], full[ROOT_MAX + PATH_MAX], file[PATH_MAX], canon[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int err = 0;

	if (canon_in_root(r->root, dir, cdir, sizeof(cdir)) < 0)
		return 0;
	snprintf(full, sizeof(full), "%s%s", r->root, cdir);
	d = opendir(full);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fnmatch(pattern, de->d_name, 0) != 0)
			continue;
		if ((size_t)snprintf(file, sizeof(file), "%s/%s",
				     strcmp(cdir, "/") == 0 ? "" : cdir, de->d_name) >= sizeof(file))
			continue;
		if (canon_in_root(r->root, file, canon, sizeof(canon)) < 0)
			continue;
		err = add_file(r, canon);
		if (err)
			break;
	}
	closedir(d);
	return err;
}

/* An exact name stops at the first directory that has it, as ld.so does; a glob takes all. */
static int search_dirs(struct resolver *r, const char *const *dirs, size_t cnt,
		       const char *pattern, bool exact)
{
	size_t i;
	int err;

	for (i = 0; i < cnt; i++) {
		err = search_dir(r, dirs[i], pattern);
		if (err)
			return err;
		if (exact && r->matched)
			break;
	}
	return 0;
}

struct cache_match {
	char *key;
	char *value;
	uint64_t hwcap;
};

struct cache_search {
	const char *pattern;
	struct cache_match *m;
	size_t cnt;
};

static int cache_collect(const struct ldso_cache_entry *e, void *ctx)
{
	struct cache_search *cs = ctx;
	struct cache_match *m;

	if (!ldso_cache__host_flags(e->flags) || e->value[0] != '/')
		return 0;
	if (fnmatch(cs->pattern, e->key, 0) != 0)
		return 0;
	m = ARRAY_SLOT(cs->m, cs->cnt);
	if (!m)
		return -ENOMEM;
	m->key = strdup(e->key);
	m->value = strdup(e->value);
	m->hwcap = e->hwcap;
	if (!m->key || !m->value) {
		free(m->key);
		free(m->value);
		return -ENOMEM;
	}
	cs->cnt++;
	return 0;
}

static bool cache_has_baseline(const struct cache_search *cs, const char *key)
{
	size_t i;

	for (i = 0; i < cs->cnt; i++) {
		if (cs->m[i].hwcap == 0 && strcmp(cs->m[i].key, key) == 0)
			return true;
	}
	return false;
}

static int search_cache(struct resolver *r, const char *pattern)
{
	struct cache_search cs = { .pattern = pattern };
	char path[ROOT_MAX + PATH_MAX], canon[PATH_MAX];
	size_t i;
	int err;

	snprintf(path, sizeof(path), "%s/etc/ld.so.cache", r->root);
	err = ldso_cache__parse_file(path, cache_collect, &cs);
	/* ld.so lives without a cache (musl, a broken file): so do we. */
	if (err && err != -ENOMEM)
		err = 0;
	for (i = 0; !err && i < cs.cnt; i++) {
		/*
		 * A hwcap entry (glibc-hwcaps/x86-64-v3/...) is chosen per CPU by
		 * ld.so; without a process to ask, take the baseline when there is one.
		 */
		if (cs.m[i].hwcap && cache_has_baseline(&cs, cs.m[i].key))
			continue;
		if (canon_in_root(r->root, cs.m[i].value, canon, sizeof(canon)) < 0)
			continue;
		err = add_file(r, canon);
	}
	for (i = 0; i < cs.cnt; i++) {
		free(cs.m[i].key);
		free(cs.m[i].value);
	}
	free(cs.m);
	return err;
}

/* The target's LD_LIBRARY_PATH in *val (NULL when unset), the one it started with. */
static int get_ld_library_path(pid_t pid, char **val)
{
	static const char var[] = "LD_LIBRARY_PATH=";
	char environ_path[64], *ent = NULL;
	size_t ent_sz = 0;
	const char *v;
	FILE *f;
	int err = 0;

	*val = NULL;
	if (pid <= 0) {
		v = getenv("LD_LIBRARY_PATH");
		if (v && !(*val = strdup(v)))
			return -ENOMEM;
		return 0;
	}
	snprintf(environ_path, sizeof(environ_path), "/proc/%d/environ", (int)pid);
	f = fopen(environ_path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getdelim(&ent, &ent_sz, '\0', f) > 0) {
		if (strncmp(ent, var, strlen(var)) != 0)
			continue;
		/* getenv() finds the first one too. */
		*val = strdup(ent + strlen(var));
		if (!*val)
			err = -ENOMEM;
		break;
	}
	free(ent);
	fclose(f);
	return err;
}

/*
 * Split LD_LIBRARY_PATH on ':' and ';' (ld.so takes both) into absolute
 * directories. Relative ones are relative to the process's cwd: ours for
 * pid 0, dropped for a target whose cwd we cannot name in its own root.
 */
static int split_ld_library_path(const char *val, pid_t pid, char ***dirs, size_t *cnt)
{
	char *copy = NULL, *tok, *save = NULL, **v, *dir, cwd[PATH_MAX];
	int err = 0;

	*dirs = NULL;
	*cnt = 0;
	if (!val)
		return 0;
	copy = strdup(val);
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ":;", &save); tok; tok = strtok_r(NULL, ":;", &save)) {
		if (tok[0] == '/') {
			dir = strdup(tok);
		} else {
			if (pid > 0 || !getcwd(cwd, sizeof(cwd)))
				continue;
			if (asprintf(&dir, "%s/%s", cwd, tok) < 0)
				dir = NULL;
		}
		if (!dir) {
			err = -ENOMEM;
			goto cleanup;
		}
		v = ARRAY_SLOT(*dirs, *cnt);
		if (!v) {
			free(dir);
			err = -ENOMEM;
			goto cleanup;
		}
		*v = dir;
		(*cnt)++;
	}
cleanup:
	free(copy);
	return err;
}

static void free_dirs(char **dirs, size_t cnt)
{
	size_t i;

	for (i = 0; i < cnt; i++)
		free(dirs[i]);
	free(dirs);
}

/* Where a name is looked for, from the environment and the program. */
struct search_path {
	char *ldpath;			/* LD_LIBRARY_PATH; NULL: unset */
	char **ld_dirs;
	size_t ld_cnt;
	char **rpath_dirs;		/* the program's DT_RPATH: before LD_LIBRARY_PATH */
	size_t rpath_cnt;
	char **runpath_dirs;		/* the program's DT_RUNPATH: after it */
	size_t runpath_cnt;
};

/* One pass over the sources in ld.so's order; stops at the first with a match. */
static int search_sources(struct resolver *r, const char *pattern, bool exact, const struct search_path *sp,
			  struct where_buf *w)
{
	int err;

	r->matched = 0;
	if (r->pid > 0) {
		where_add(w, "/proc/%d/maps", (int)r->pid);
		err = search_maps(r, pattern);
		if (err || r->matched)
			return err;
	}

	if (sp->rpath_cnt) {
		where_add(w, "the program's DT_RPATH");
		err = search_dirs(r, (const char *const *)sp->rpath_dirs, sp->rpath_cnt, pattern, exact);
		if (err || r->matched)
			return err;
	}
	if (sp->ldpath)
		where_add(w, "LD_LIBRARY_PATH=%s", sp->ldpath);
	else
		where_add(w, "LD_LIBRARY_PATH (unset)");
	err = search_dirs(r, (const char *const *)sp->ld_dirs, sp->ld_cnt, pattern, exact);
	if (err || r->matched)
		return err;
	if (sp->runpath_cnt) {
		where_add(w, "the program's DT_RUNPATH");
		err = search_dirs(r, (const char *const *)sp->runpath_dirs, sp->runpath_cnt, pattern, exact);
		if (err || r->matched)
			return err;
	}

	where_add(w, "/etc/ld.so.cache");
	err = search_cache(r, pattern);
	if (err || r->matched)
		return err;

	for (size_t i = 0; i < sizeof(std_dirs) / sizeof(std_dirs[0]); i++)
		where_add(w, "%s", std_dirs[i]);
	return search_dirs(r, std_dirs, sizeof(std_dirs) / sizeof(std_dirs[0]), pattern, exact);
}

/* "libssl.so" means whichever libssl.so.N is installed (often no dev symlink): the glob of those; NULL: no memory. */
static char *versioned_pattern(const char *name)
{
	char *p;

	return asprintf(&p, "%s.*", name) < 0 ? NULL : p;
}

bool lib_name_matches(const char *spec, const char *base)
{
	char *versioned;
	bool match;

	if (strchr(spec, '/'))
		return false;
	if (!fnmatch(spec, base, 0))
		return true;
	if (strpbrk(spec, "*?[") || !(versioned = versioned_pattern(spec)))
		return false;
	match = !fnmatch(versioned, base, 0);
	free(versioned);
	return match;
}

/*
 * The program's DT_RPATH and DT_RUNPATH as directories (pid's executable,
 * or r->exe), $ORIGIN its directory as it sees it. A program that cannot
 * be read adds none: the other sources still count.
 */
static int program_dirs(const struct resolver *r, struct search_path *sp)
{
	char path[PATH_MAX], origin[PATH_MAX], *rpath = NULL, *runpath = NULL, *slash;
	ssize_t n;
	int err;

	if (!r->program || (r->pid <= 0 && !r->exe))
		return 0;
	if (r->pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)r->pid);
		n = readlink(path, origin, sizeof(origin) - 1);
		if (n <= 0)
			return 0;
		origin[n] = '\0';
	} else {
		snprintf(path, sizeof(path), "%s", r->exe);
		if (!realpath(r->exe, origin))
			return 0;
	}
	slash = strrchr(origin, '/');
	if (!slash)
		return 0;
	*(slash == origin ? slash + 1 : slash) = '\0';
	if (elf_search_path(path, origin, &rpath, &runpath))
		return 0;
	err = split_ld_library_path(rpath, r->pid, &sp->rpath_dirs, &sp->rpath_cnt);
	if (!err)
		err = split_ld_library_path(runpath, r->pid, &sp->runpath_dirs, &sp->runpath_cnt);
	free(rpath);
	free(runpath);
	return err;
}

static void search_path_free(struct search_path *sp)
{
	free_dirs(sp->ld_dirs, sp->ld_cnt);
	free_dirs(sp->rpath_dirs, sp->rpath_cnt);
	free_dirs(sp->runpath_dirs, sp->runpath_cnt);
	free(sp->ldpath);
}

static int resolve_name(struct resolver *r, const char *name, struct where_buf *w)
{
	bool exact = !strpbrk(name, "*?[");
	struct search_path sp = {};
	char proc[64], *versioned = NULL;
	struct stat st;
	int err;

	if (r->pid > 0) {
		snprintf(proc, sizeof(proc), "/proc/%d", (int)r->pid);
		if (stat(proc, &st) < 0) {
			err = errno == ENOENT ? -ESRCH : -errno;
			where_add(w, "%s", proc);
			return err;
		}
		snprintf(r->root, sizeof(r->root), "/proc/%d/root", (int)r->pid);
	}
	err = get_ld_library_path(r->pid, &sp.ldpath);
	if (err) {
		where_add(w, "/proc/%d/environ", (int)r->pid);
		goto cleanup;
	}
	err = split_ld_library_path(sp.ldpath, r->pid, &sp.ld_dirs, &sp.ld_cnt);
	if (!err)
		err = program_dirs(r, &sp);
	if (err)
		goto cleanup;

	err = search_sources(r, name, exact, &sp, w);
	if (err || r->matched || !exact)
		goto cleanup;
	versioned = versioned_pattern(name);
	if (!versioned) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = search_sources(r, versioned, false /* exact */, &sp, NULL);
cleanup:
	if (!err && !r->matched)
		err = -ENOENT;
	free(versioned);
	search_path_free(&sp);
	return err;
}

/*
 * One file a glob found. Through a process's root (given so, or an absolute
 * path of a -p target), its links are followed inside that root: realpath()
 * would leave the container for the host's file of the same name.
 */
static int add_path(struct resolver *r, const char *found)
{
	char canon[PATH_MAX];
	size_t prefix = 0;
	pid_t pid = proc_root_split(found, &prefix);

	if (pid > 0) {
		struct resolver in = *r;
		int err;

		in.pid = pid;
		snprintf(in.root, sizeof(in.root), "%.*s", (int)prefix, found);
		if (canon_in_root(in.root, found[prefix] ? found + prefix : "/", canon, sizeof(canon)) < 0)
			return 0;
		in.matched = 0;
		err = add_file(&in, canon);

		r->matched += in.matched;
		r->non_elf |= in.non_elf;
		return err;
	}
	if (!realpath(found, canon))
		return 0;
	return add_file(r, canon);
}

/*
 * A relative path is ours (our cwd); an absolute one is the target's when
 * there is a pid, so "-p PID --lib /usr/lib/libfoo.so" is the file that
 * process sees in its mount namespace.
 */
static int resolve_path(struct resolver *r, const char *spec, struct where_buf *w)
{
	char full[ROOT_MAX + PATH_MAX];
	size_t prefix;
	glob_t g;
	size_t i;
	int rc, err = 0;

	if (r->pid > 0 && spec[0] == '/' && !proc_root_split(spec, &prefix))
		snprintf(full, sizeof(full), "/proc/%d/root%s", (int)r->pid, spec);
	else
		snprintf(full, sizeof(full), "%s", spec);
	rc = glob(full, 0, NULL, &g);
	if (rc == GLOB_NOSPACE) {
		globfree(&g);
		return -ENOMEM;
	}
	for (i = 0; rc == 0 && i < g.gl_pathc; i++) {
		err = add_path(r, g.gl_pathv[i]);
		if (err)
			break;
	}
	globfree(&g);
	if (err)
		return err;
	if (r->matched)
		return 0;
	if (r->non_elf) {
		where_add(w, "%s (not an ELF file)", full);
		return -ENOEXEC;
	}
	where_add(w, "%s", full);
	return -ENOENT;
}

/*
 * A name the host does not have may be in a container only: look inside
 * each other mount namespace, through one of its processes, until one has it.
 */
static int resolve_name_elsewhere(struct resolver *host, const char *name, struct where_buf *w)
{
	struct mount_ns *nss = NULL;
	size_t cnt = 0;
	int err;

	err = mount_ns_list(&nss, &cnt);
	if (err)
		return -ENOENT;
	err = -ENOENT;
	for (size_t i = 0; i < cnt && err == -ENOENT; i++) {
		struct resolver r = { .pid = nss[i].pid, .out = host->out };

		err = resolve_name(&r, name, NULL);
		/* A process that exits meanwhile, or whose files are closed to us, has nothing to add. */
		if (err == -ESRCH || err == -EACCES)
			err = -ENOENT;
		host->matched += r.matched;
	}
	if (cnt)
		where_add(w, "the mount namespaces of %zu other process%s", cnt, cnt == 1 ? "" : "es");
	free(nss);
	return err;
}

struct image_search {
	struct resolver *r;
	const char *name;
};

static bool image_wants(const char *base, void *ctx)
{
	const struct image_search *is = ctx;

	return lib_name_matches(is->name, base);
}

/* The first file found is the primary: -EEXIST stops the walk, the others are the copies' to find. */
static int image_found(const char *path, const char *display, void *ctx)
{
	struct image_search *is = ctx;
	struct stat st;
	dev_t dev;
	ino_t ino;
	int err;

	if (stat(path, &st) < 0 || real_inode_of(path, &dev, &ino) < 0)
		return 0;
	is->r->matched++;
	err = lib_list_append(is->r->out, path, display, &st, dev, ino, 0, 0);
	return err ? err : -EEXIST;
}

/*
 * A name no running process has may be in an image that no container runs
 * yet: the node's image stores (elf/image_layers.h) give its layer's file.
 */
static int resolve_name_in_images(struct resolver *host, const char *name, struct where_buf *w)
{
	struct image_layers *il = image_layers__new(NULL);
	struct image_search is = { .r = host, .name = name };
	int err;

	if (!il)
		return -ENOENT;
	err = image_layers__scan(il, image_wants, image_found, &is);
	image_layers__free(il);
	where_add(w, "the node's container images");
	return err == -EEXIST ? 0 : err < 0 ? err : -ENOENT;
}

static int cmp_display(const void *a, const void *b)
{
	const struct lib_file *la = a, *lb = b;

	return strcmp(la->display, lb->display);
}

static void lib_list_truncate(struct lib_list *list, size_t cnt)
{
	while (list->cnt > cnt) {
		list->cnt--;
		free(list->libs[list->cnt].path);
		free(list->libs[list->cnt].display);
	}
}

static int resolve(struct resolver *r, const char *spec, char *where, size_t where_sz)
{
	struct where_buf w = { .buf = where, .sz = where_sz };
	struct lib_list *out = r->out;
	pid_t pid = r->pid;
	size_t start;
	int err;

	if (where && where_sz)
		where[0] = '\0';
	if (!spec || !spec[0] || !out || pid < 0)
		return -EINVAL;
	start = out->cnt;

	if (strchr(spec, '/')) {
		err = resolve_path(r, spec, &w);
	} else {
		err = resolve_name(r, spec, &w);
		if (err == -ENOENT && pid == 0)
			err = resolve_name_elsewhere(r, spec, &w);
		if (err == -ENOENT && pid == 0)
			err = resolve_name_in_images(r, spec, &w);
	}

	/* All or nothing: a caller that reports the error keeps its list as it was. */
	if (err) {
		lib_list_truncate(out, start);
		return err;
	}
	/* readdir order is the filesystem's: sort for stable reports. */
	if (out->cnt > start)
		qsort(out->libs + start, out->cnt - start, sizeof(*out->libs), cmp_display);
	return 0;
}

int lib_resolve(const char *spec, pid_t pid, struct lib_list *out, char *where, size_t where_sz)
{
	struct resolver r = { .pid = pid, .target = pid, .out = out };

	return resolve(&r, spec, where, where_sz);
}

int lib_resolve_program(const char *spec, pid_t pid, const char *exe, struct lib_list *out, char *where,
			size_t where_sz)
{
	struct resolver r = { .pid = pid, .target = pid, .out = out, .program = true, .exe = pid > 0 ? NULL : exe };

	return resolve(&r, spec, where, where_sz);
}

void lib_list__free(struct lib_list *list)
{
	if (!list)
		return;
	lib_list_truncate(list, 0);
	free(list->libs);
	list->libs = NULL;
}
