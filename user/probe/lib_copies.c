// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/lib_resolve.h"
#include "probe/copy_funcs.h"
#include "probe/detacher.h"
#include "probe/idle_copies.h"
#include "probe/lib_copies.h"
#include "probe/probe_attach.h"
#include "util/array.h"
#include "util/messages.h"
#include "util/mount_ns.h"
#include "util/real_inode.h"
#include "util/clock.h"
#include "util/path.h"

#define DELETED_SUFFIX	" (deleted)"
/* How often the sweep asks whether each copy's holders are still alive (a lost exit event is caught so). */
#define HOLDERS_CHECK_S	1.0

/* A (dev, ino) pair as stat() and /proc/PID/maps show it: each overlay mount has its own device. */
struct seen_id {
	dev_t dev;
	ino_t ino;
};

struct lib_copy {
	struct lib_copy_info info;	/* dev, ino: the real file's, what the uprobes attach to */
	struct seen_id *aliases;	/* the ids processes see it by: one per container of an image */
	size_t nr_aliases;
	char *path;			/* what we open: through /proc/PID/root for another namespace */
	char *host_path;		/* the real file as our namespace sees it (a layer's); NULL: none */
	char *display;
	struct attacher *attacher;	/* NULL for a primary (the session's attacher holds it), or none linked */
	struct copy_funcs funcs;	/* where its functions are, from its first attach (the file may be gone later) */
	pid_t *holders;			/* processes known to map it; empty: look again */
	size_t nr_holders;
	bool failed;			/* the kernel refused it: not tried again */
	bool unlinked;			/* its links were handed off by lib_copies__unlink_changed: attach again */
	double idle_since;		/* info.idle: since when no process maps it */
};

struct lib_copies {
	const struct probe_table *table;
	const struct str_list *specs;
	enum attach_mode mode;
	struct attach_progs progs;
	struct lib_copies_hooks hooks;
	struct lib_copy *copies;
	size_t nr_copies;
	struct lib_copy_info *infos;	/* lib_copies__list's answer */
	struct detacher **detachers;	/* links being closed off the loop's thread */
	size_t nr_detachers;
	double seen_s;			/* the event being handled: when the kernel saw the file (0: none) */
	double t0;
	bool *linked;			/* by function id: what the copies' links hold; NULL: every function */
	size_t max_idle;		/* copies kept attached with no process mapping them */
	double holders_t;		/* the holders were last checked alive then */
};

static const char *const origin_names[] = {
	[COPY_PRIMARY] = "primary",
	[COPY_AT_START] = "start",
	[COPY_DISCOVERED] = "discovered",
	[COPY_IMAGE] = "image",
	[COPY_REPLACED] = "replaced",
};

const char *lib_copy_origin_name(enum lib_copy_origin origin)
{
	return (size_t)origin < sizeof(origin_names) / sizeof(origin_names[0]) ? origin_names[origin] : "?";
}

bool lib_copies__wants_name(const struct lib_copies *c, const char *base)
{
	for (size_t i = 0; i < c->specs->cnt; i++)
		if (lib_name_matches(c->specs->items[i], base))
			return true;
	return false;
}

/* The probe table's library a copy named base counts for: the same file name, else the same stem before ".so". */
static int primary_of(const struct lib_copies *c, const char *base)
{
	size_t stem = strcspn(base, ".");

	for (size_t i = 0; i < c->table->nr_libs; i++)
		if (!strcmp(path_base(c->table->libs[i].file->display), base))
			return (int)i;
	for (size_t i = 0; i < c->table->nr_libs; i++) {
		const char *b = path_base(c->table->libs[i].file->display);

		if (strcspn(b, ".") == stem && !strncmp(b, base, stem))
			return (int)i;
	}
	return -1;
}

static struct lib_copy *find_copy(struct lib_copies *c, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < c->nr_copies; i++)
		if (c->copies[i].info.dev == dev && c->copies[i].info.ino == ino)
			return &c->copies[i];
	return NULL;
}

/* Alive and not yet past its exit (a zombie's exit event has gone by). */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512], *paren;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

static struct lib_copy *find_alias(struct lib_copies *c, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < c->nr_copies; i++)
		for (size_t k = 0; k < c->copies[i].nr_aliases; k++)
			if (c->copies[i].aliases[k].dev == dev && c->copies[i].aliases[k].ino == ino)
				return &c->copies[i];
	return NULL;
}

static int add_alias(struct lib_copy *copy, dev_t dev, ino_t ino)
{
	struct seen_id *slot;

	for (size_t k = 0; k < copy->nr_aliases; k++)
		if (copy->aliases[k].dev == dev && copy->aliases[k].ino == ino)
			return 0;
	slot = ARRAY_SLOT(copy->aliases, copy->nr_aliases);
	if (!slot)
		return -ENOMEM;
	*slot = (struct seen_id){ dev, ino };
	copy->nr_aliases++;
	return 0;
}

static int add_holder(struct lib_copies *c, struct lib_copy *copy, pid_t pid)
{
	pid_t *slot;
	int err;

	if (copy->info.origin == COPY_PRIMARY || copy->info.detached)
		return 0;
	for (size_t i = 0; i < copy->nr_holders; i++)
		if (copy->holders[i] == pid)
			return 0;
	slot = ARRAY_SLOT(copy->holders, copy->nr_holders);
	if (!slot)
		return -ENOMEM;
	err = c->hooks.watch ? c->hooks.watch(pid, c->hooks.ctx) : 0;
	if (err)
		return err;
	/* Watched only from now: one that exited before would never say so. */
	if (!pid_alive(pid))
		return 0;
	*slot = pid;
	copy->nr_holders++;
	if (copy->info.idle) {
		copy->info.idle = false;
		notemsg("copy %s in use again by pid %d, probed since its first instruction (kept attached for "
			"%.1f s)", copy->display, (int)pid, mono_seconds() - copy->idle_since);
	}
	return 0;
}

/*
 * The file copy is reached by now: through the namespace of a process that
 * still maps it, since the one it was found through may have exited.
 */
static void reach_path(const struct lib_copy *copy, char *buf, size_t sz)
{
	for (size_t k = 0; copy->info.ns_pid && k < copy->nr_holders; k++) {
		if (!pid_alive(copy->holders[k]))
			continue;
		snprintf(buf, sz, "/proc/%d/root%s", (int)copy->holders[k], copy->display);
		return;
	}
	snprintf(buf, sz, "%s", copy->host_path ?: copy->path);
}

/*
 * The real file of path as our namespace sees it, if it is (dev, ino): a
 * copy kept attached once its namespace is gone is checked, and attached
 * again, through it. NULL: none (another namespace's file, not a layer's).
 */
static char *host_path_of(const char *path, dev_t dev, ino_t ino)
{
	char real[PATH_MAX], *rest = real;
	size_t prefix;
	ino_t self, ns;
	pid_t pid;
	dev_t d;
	ino_t i;

	if (real_file_of(path, &d, &i, real, sizeof(real)) || d != dev || i != ino || !real[0])
		return NULL;
	pid = proc_root_split(real, &prefix);
	if (pid > 0) {
		/* Through a process's root: ours only if it shares our mount namespace (and no chroot). */
		if (mount_ns_of(0, &self) || mount_ns_of(pid, &ns) || self != ns)
			return NULL;
		rest = real + prefix;
	}
	return strdup(rest);
}

/* The copy's file is still the one its probes are on (a layer not removed, a file not replaced). */
static bool file_remains(const struct lib_copy *copy)
{
	struct stat st;

	return copy->host_path && !stat(copy->host_path, &st) && st.st_dev == copy->info.dev &&
	       st.st_ino == copy->info.ino;
}

/*
 * A new attacher for copy's functions that on holds (NULL: all of them) in
 * *out, or none when it holds none of them. The functions are read from
 * the file once while it is attached (a relink needs no file then). 0 or
 * -errno (*out may then be set: the caller frees it).
 */
static int attach_funcs(struct lib_copies *c, struct lib_copy *copy, const bool *on, struct attacher **out)
{
	struct attach_skip *skips = NULL;
	char path[PATH_MAX + 32];
	size_t nr_skips = 0;
	int err = 0;

	*out = NULL;
	reach_path(copy, path, sizeof(path));
	if (!copy->funcs.cnt) {
		copy_funcs__free(&copy->funcs);
		err = copy_funcs__map(c->table, copy->info.lib, path, &copy->funcs);
		if (!err && !copy->funcs.cnt)
			err = -ENOENT;
		copy->info.nr_missing = copy->funcs.missing;
		if (err)
			return err;
	}
	*out = attacher__new(c->mode, &c->progs, 0);
	if (!*out)
		return -errno;
	err = attach_file_subset(*out, path, copy->funcs.offsets, copy->funcs.cookies, copy->funcs.cnt, on, 0, &skips,
				 &nr_skips);
	free(skips);
	if (!err && !attacher__nr_attached(*out)) {
		attacher__free(*out);
		*out = NULL;
	}
	return err;
}

/* The copy's links, holding the functions the copies' links hold now. */
static int attach_copy(struct lib_copies *c, struct lib_copy *copy)
{
	int err = attach_funcs(c, copy, c->linked, &copy->attacher);

	copy->info.nr_funcs = copy->attacher ? attacher__nr_attached(copy->attacher) : 0;
	return err;
}

/*
 * One line per change of a copy: pid, the process of the event (0: the
 * copy's first namespace), late_ms how long after the kernel saw the
 * mapping its probes went in (0: not a mapping's).
 */
static void note_copy(const struct lib_copy *copy, const char *what, pid_t pid, double late_ms)
{
	char ns[32] = "", late[48] = "";

	if (!pid)
		pid = copy->info.ns_pid;
	if (pid && copy->info.ns_pid)
		snprintf(ns, sizeof(ns), " (namespace of pid %d)", (int)pid);
	if (late_ms > 0)
		snprintf(late, sizeof(late), ", %.1f ms after its first mapping", late_ms);
	notemsg("%s copy %s%s, dev %u:%u inode %lu: %zu functions%s%s", what, copy->display, ns,
	       major(copy->info.dev), minor(copy->info.dev), (unsigned long)copy->info.ino, copy->info.nr_funcs,
	       copy->info.nr_missing ? ", some of the primary's missing (another version)" : "", late);
}

static int add_copy_of(struct lib_copies *c, int lib, const char *path, const char *display, pid_t ns_pid,
		       dev_t dev, ino_t ino, const struct seen_id *seen, pid_t holder, enum lib_copy_origin origin);

/* A new copy: attached, or dropped with one line saying why. */
static int add_copy(struct lib_copies *c, const char *path, const char *display, pid_t ns_pid,
		    dev_t dev, ino_t ino, const struct seen_id *seen, pid_t holder, enum lib_copy_origin origin)
{
	int lib = primary_of(c, path_base(display));

	if (lib < 0)
		return 0;
	return add_copy_of(c, lib, path, display, ns_pid, dev, ino, seen, holder, origin);
}

/* A new copy of the table's library lib. */
static int add_copy_of(struct lib_copies *c, int lib, const char *path, const char *display, pid_t ns_pid,
		       dev_t dev, ino_t ino, const struct seen_id *seen, pid_t holder, enum lib_copy_origin origin)
{
	struct lib_copy *copy;
	int err;

	copy = ARRAY_SLOT(c->copies, c->nr_copies);
	if (!copy)
		return -ENOMEM;
	memset(copy, 0, sizeof(*copy));
	copy->path = strdup(path);
	copy->display = strdup(display);
	if (!copy->path || !copy->display) {
		free(copy->path);
		free(copy->display);
		return -ENOMEM;
	}
	copy->info = (struct lib_copy_info){ .ns_pid = ns_pid, .dev = dev, .ino = ino, .origin = origin,
					     .lib = (size_t)lib, .attach_s = mono_seconds() - c->t0 };
	copy->host_path = host_path_of(path, dev, ino);
	c->nr_copies++;
	err = add_alias(copy, seen->dev, seen->ino);
	if (err)
		return err;
	err = attach_copy(c, copy);
	if (err) {
		if (origin == COPY_REPLACED)
			warnmsg("the new file at %s cannot be probed: %s; its calls are not counted", display,
				err == -ENOENT ? "none of the selected functions is in it" : attach_strerror(err));
		else
			warnmsg("cannot attach probes to the copy %s (pid %d's namespace): %s; its calls are not counted",
				display, (int)holder,
				err == -ENOENT ? "none of the selected functions is in it (another version)"
					       : attach_strerror(err));
		attacher__free(copy->attacher);
		copy->attacher = NULL;
		copy->info.detached = true;
		copy->info.attach_failures++;
		copy->failed = true;
		return 0;
	}
	if (c->hooks.attached)
		c->hooks.attached(dev, ino, copy->info.lib, c->hooks.ctx);
	if (origin == COPY_DISCOVERED && c->seen_s > 0)
		copy->info.discovery_ms = (mono_seconds() - c->seen_s) * 1e3;
	/* A replaced file's line is its follower's. */
	if (origin != COPY_REPLACED)
		note_copy(copy, origin == COPY_DISCOVERED ? "discovered" : origin == COPY_IMAGE ? "attached image" : "attached",
			  holder, copy->info.discovery_ms);
	return holder > 0 ? add_holder(c, copy, holder) : 0;
}

struct lib_copies *lib_copies__new(const struct probe_table *t, const struct str_list *specs,
				   enum attach_mode mode, const struct attach_progs *progs,
				   const struct lib_copies_hooks *hooks, bool start_unlinked)
{
	struct lib_copies *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	*c = (struct lib_copies){ .table = t, .specs = specs, .mode = mode, .progs = *progs,
				  .hooks = *hooks, .t0 = mono_seconds(), .max_idle = LIB_COPIES_MAX_IDLE };
	if (start_unlinked && !(c->linked = calloc(t->nr_funcs ?: 1, sizeof(*c->linked)))) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < t->nr_libs; i++) {
		const struct lib_file *f = t->libs[i].file;
		struct lib_copy *copy = ARRAY_SLOT(c->copies, c->nr_copies);

		if (!copy) {
			lib_copies__free(c);
			errno = ENOMEM;
			return NULL;
		}
		*copy = (struct lib_copy){ .info = { .ns_pid = f->ns_pid, .dev = f->dev, .ino = f->ino,
						     .origin = COPY_PRIMARY, .lib = i,
						     .nr_funcs = t->libs[i].nr_funcs } };
		copy->path = f->path;
		copy->display = f->display;
		c->nr_copies++;
		if (add_alias(copy, f->seen_dev, f->seen_ino)) {
			lib_copies__free(c);
			errno = ENOMEM;
			return NULL;
		}
	}
	return c;
}

/* A copy detached once and mapped again (the same image started anew): probed again. */
static int reattach(struct lib_copies *c, struct lib_copy *copy, pid_t pid)
{
	int err;

	/*
	 * The new mapper is a holder first: the file is reached through its
	 * namespace, since the processes it was found through are gone (and
	 * add_holder() takes none for a detached copy).
	 */
	copy->info.detached = false;
	err = add_holder(c, copy, pid) ?: attach_copy(c, copy);
	if (err) {
		attacher__free(copy->attacher);
		copy->attacher = NULL;
		copy->info.detached = true;
		copy->info.attach_failures++;
		warnmsg("cannot attach probes to the copy %s again: %s; its calls are not counted",
		       copy->display, attach_strerror(err));
		return 0;
	}
	note_copy(copy, "re-attached", pid, c->seen_s > 0 ? (mono_seconds() - c->seen_s) * 1e3 : 0);
	return 0;
}

/* A known copy that one more process maps, or maps again. */
static int mapped_again(struct lib_copies *c, struct lib_copy *copy, pid_t pid)
{
	if (copy->info.detached && !copy->failed)
		return reattach(c, copy, pid);
	return add_holder(c, copy, pid);
}

/* A file pid's maps name (as it sees it): the copy it is, attached if new. */
static int consider_mapped(struct lib_copies *c, pid_t pid, ino_t self_ns, const char *display,
			   const struct seen_id *seen, enum lib_copy_origin origin)
{
	struct lib_copy *copy = find_alias(c, seen->dev, seen->ino);
	char path[PATH_MAX + 32];
	dev_t dev;
	ino_t ino;
	ino_t ns = 0;
	int err;

	if (copy)
		return mapped_again(c, copy, pid);
	if (mount_ns_of(pid, &ns))
		return 0;
	/* Through the process's root even in our namespace: its root may be a chroot. */
	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, display);
	if (real_inode_of(path, &dev, &ino))
		return 0;
	copy = find_copy(c, dev, ino);
	if (copy) {
		/* Another container of the same image: the same layer file under another overlay. */
		err = add_alias(copy, seen->dev, seen->ino);
		return err ? err : mapped_again(c, copy, pid);
	}
	return add_copy(c, path, display, ns == self_ns ? 0 : pid, dev, ino, seen, pid, origin);
}

/*
 * Each file of pid's maps that is one of the names (want: only this file
 * name). Returns how many lines matched, or -errno.
 */
static int scan_maps(struct lib_copies *c, pid_t pid, ino_t self_ns, const char *want,
		     enum lib_copy_origin origin)
{
	char maps[64], *line = NULL;
	size_t line_sz = 0, sfx = strlen(DELETED_SUFFIX);
	unsigned int maj, min;
	unsigned long long inode;
	int off, found = 0, err = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "re");
	if (!f)
		return 0;
	while (!err && getline(&line, &line_sz, f) > 0) {
		char *p;
		size_t len;

		line[strcspn(line, "\n")] = '\0';
		off = -1;
		if (sscanf(line, "%*s %*s %*s %x:%x %llu %n", &maj, &min, &inode, &off) < 3 || off < 0)
			continue;
		p = line + off;
		len = strlen(p);
		/* The file on disk is no longer the mapped one: a probe on it would never fire. */
		if (p[0] != '/' || (len > sfx && !strcmp(p + len - sfx, DELETED_SUFFIX)))
			continue;
		if (want ? strcmp(path_base(p), want) : !lib_copies__wants_name(c, path_base(p)))
			continue;
		found++;
		err = consider_mapped(c, pid, self_ns, p, &(struct seen_id){ makedev(maj, min), (ino_t)inode },
				      origin);
	}
	free(line);
	fclose(f);
	return err ? err : found;
}

int lib_copies__mapped(struct lib_copies *c, pid_t pid, const char *base, double seen_s)
{
	ino_t self;
	int n;

	if (mount_ns_of(0, &self))
		return -ESRCH;
	c->seen_s = seen_s;
	n = scan_maps(c, pid, self, base, COPY_DISCOVERED);
	c->seen_s = 0;
	return n < 0 ? n : n > 0;
}

/* What a namespace's own search finds for each name: its copies, mapped yet or not. */
static int scan_namespace(struct lib_copies *c, const struct mount_ns *ns)
{
	for (size_t i = 0; i < c->specs->cnt; i++) {
		struct lib_list files = {};
		int err = 0;

		if (strchr(c->specs->items[i], '/'))
			continue;
		if (lib_resolve(c->specs->items[i], ns->pid, &files, NULL, 0)) {
			lib_list__free(&files);
			continue;
		}
		for (size_t k = 0; k < files.cnt && !err; k++) {
			const struct lib_file *f = &files.libs[k];
			struct seen_id seen = { f->seen_dev, f->seen_ino };
			struct lib_copy *copy = find_copy(c, f->dev, f->ino);

			if (copy)
				err = add_alias(copy, seen.dev, seen.ino);
			else
				err = add_copy(c, f->path, f->display, ns->pid, f->dev, f->ino, &seen, ns->pid,
					       COPY_AT_START);
		}
		lib_list__free(&files);
		if (err)
			return err;
	}
	return 0;
}

static bool targeted(const struct lib_copies *c, pid_t pid)
{
	return !c->hooks.in_target || c->hooks.in_target(pid, c->hooks.ctx);
}

static int scan_all_maps(struct lib_copies *c, ino_t self)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid() || !targeted(c, (pid_t)pid))
			continue;
		err = scan_maps(c, (pid_t)pid, self, NULL, COPY_AT_START);
		err = err < 0 ? err : 0;
	}
	closedir(d);
	return err;
}

int lib_copies__scan(struct lib_copies *c)
{
	struct mount_ns *nss = NULL;
	size_t cnt = 0;
	ino_t self;
	int err;

	err = mount_ns_of(0, &self);
	/* Targets: what their processes map now, and what they map later (the hook). */
	if (!err && !c->hooks.in_target)
		err = mount_ns_list(&nss, &cnt);
	for (size_t i = 0; !err && i < cnt; i++)
		err = scan_namespace(c, &nss[i]);
	free(nss);
	return err ? err : scan_all_maps(c, self);
}

/*
 * Closing a uprobe link may wait in the kernel for a task stuck in the
 * probe machinery (probe/detacher.h): on a thread of its own, so that the
 * profile goes on meanwhile.
 */
static void release_attacher(struct lib_copies *c, struct attacher *a)
{
	struct detacher **slot;

	if (!a)
		return;
	slot = ARRAY_SLOT(c->detachers, c->nr_detachers);
	if (slot && (*slot = detacher__start(a))) {
		c->nr_detachers++;
		return;
	}
	attacher__free(a);
}

/* Its next mapping is reported again, whichever id the kernel's hook meets. */
static void forget_ids(struct lib_copies *c, const struct lib_copy *copy)
{
	for (size_t k = 0; c->hooks.forget && k < copy->nr_aliases; k++)
		c->hooks.forget(copy->aliases[k].dev, copy->aliases[k].ino, c->hooks.ctx);
	if (c->hooks.forget)
		c->hooks.forget(copy->info.dev, copy->info.ino, c->hooks.ctx);
}

static void detach_copy(struct lib_copies *c, struct lib_copy *copy)
{
	release_attacher(c, copy->attacher);
	copy->attacher = NULL;
	copy_funcs__free(&copy->funcs);
	copy->info.detached = true;
	copy->info.idle = false;
	copy->info.detach_s = mono_seconds() - c->t0;
	copy->nr_holders = 0;
	forget_ids(c, copy);
}

/* The set's idle copies, as the policy (probe/idle_copies.h) counts them. */
static struct idle_copies count_idle(const struct lib_copies *c)
{
	struct idle_copies idle = {};

	for (size_t i = 0; i < c->nr_copies; i++)
		idle_copies__count(&idle, i, c->copies[i].info.idle, c->copies[i].idle_since);
	return idle;
}

static void evict_idle(struct lib_copies *c, struct lib_copy *oldest)
{
	detach_copy(c, oldest);
	notemsg("detached copy %s, dev %u:%u inode %lu: idle the longest of %zu idle copies, the most kept",
		oldest->display, major(oldest->info.dev), minor(oldest->info.dev), (unsigned long)oldest->info.ino,
		c->max_idle);
}

/*
 * No process maps copy any more. While its file remains, its probes stay:
 * the kernel writes a uprobe's breakpoints into each new mapping of the
 * inode before the process can run it, so the next container of its image
 * is counted from its first call, with no event to wait for. Its ids are
 * forgotten all the same, so that the next mapping makes it held again.
 */
static bool keep_idle(struct lib_copies *c, struct lib_copy *copy)
{
	struct idle_copies idle = count_idle(c);
	enum idle_decision d;
	size_t evict;

	d = idle_copies__release(&idle, c->max_idle, file_remains(copy), &evict);
	if (d == IDLE_DETACH)
		return false;
	if (d == IDLE_KEEP_EVICT)
		evict_idle(c, &c->copies[evict]);
	copy->info.idle = true;
	copy->idle_since = mono_seconds();
	forget_ids(c, copy);
	return true;
}

/*
 * Every process that maps copy i now becomes a holder, except gone, whose
 * exit is being handled: forks inherit mappings unseen, and a container of
 * an image whose layer file the kernel reported already makes no event of
 * its own (its overlay id is new to us, so its maps lines of that name are
 * looked at through their real inode).
 * Copies met meanwhile may be added: the array may move.
 */
static size_t find_holders(struct lib_copies *c, size_t i, pid_t gone)
{
	char base[NAME_MAX + 1];
	struct dirent *de;
	ino_t self;
	DIR *d;

	snprintf(base, sizeof(base), "%s", path_base(c->copies[i].display));
	if (mount_ns_of(0, &self) || !(d = opendir("/proc")))
		return 1;	/* cannot tell: keep it */
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || pid == getpid() || pid == gone || !targeted(c, (pid_t)pid))
			continue;
		scan_maps(c, (pid_t)pid, self, base, COPY_DISCOVERED);
	}
	closedir(d);
	return c->copies[i].nr_holders;
}

void lib_copies__exited(struct lib_copies *c, pid_t pid)
{
	for (size_t i = 0; i < c->nr_copies; i++) {
		struct lib_copy *copy = &c->copies[i];
		bool held = false;

		for (size_t k = 0; k < copy->nr_holders && !held; k++) {
			if (copy->holders[k] != pid)
				continue;
			copy->holders[k] = copy->holders[--copy->nr_holders];
			held = true;
		}
		if (!held || copy->nr_holders || copy->info.detached || copy->info.idle)
			continue;
		/* Its exit is reported as it begins: its maps may still name the copy. */
		if (find_holders(c, i, pid))
			continue;
		copy = &c->copies[i];
		if (keep_idle(c, copy)) {
			notemsg("idle copy %s, dev %u:%u inode %lu: no process maps it after pid %d, its probes stay "
				"while its file remains", copy->display, major(copy->info.dev), minor(copy->info.dev),
				(unsigned long)copy->info.ino, (int)pid);
			continue;
		}
		detach_copy(c, copy);
		note_copy(copy, "detached", pid, 0);
	}
}

int lib_copies__replaced(struct lib_copies *c, size_t lib, const char *path)
{
	struct lib_copy *copy;
	dev_t dev;
	ino_t ino;
	int err;

	if (lib >= c->table->nr_libs)
		return -EINVAL;
	err = real_inode_of(path, &dev, &ino);
	if (err)
		return err;
	if (find_copy(c, dev, ino))
		return 0;
	err = add_copy_of(c, (int)lib, path, path, 0, dev, ino, &(struct seen_id){ dev, ino }, 0, COPY_REPLACED);
	copy = &c->copies[c->nr_copies - 1];
	if (err)
		return err;
	return copy->failed ? -ENOEXEC : 1;
}

int lib_copies__add_image_file(struct lib_copies *c, const char *path, const char *display)
{
	struct idle_copies idle;
	struct lib_copy *copy;
	dev_t dev;
	ino_t ino;
	int err;

	if (primary_of(c, path_base(display)) < 0 || real_inode_of(path, &dev, &ino) || find_copy(c, dev, ino))
		return 0;
	idle = count_idle(c);
	if (!idle_copies__room(&idle, c->max_idle))
		return -ENOSPC;
	err = add_copy(c, path, display, 0, dev, ino, &(struct seen_id){ dev, ino }, 0, COPY_IMAGE);
	copy = &c->copies[c->nr_copies - 1];
	if (err || copy->info.detached)
		return err;
	copy->info.idle = true;
	copy->idle_since = mono_seconds();
	return 1;
}

/*
 * A holder gone without its exit handled: its event lost (the ringbuf
 * full) or its watch refused. 0: none.
 */
static pid_t gone_holder(const struct lib_copies *c)
{
	for (size_t i = 0; i < c->nr_copies; i++)
		for (size_t k = 0; k < c->copies[i].nr_holders; k++)
			if (!pid_alive(c->copies[i].holders[k]))
				return c->copies[i].holders[k];
	return 0;
}

size_t lib_copies__sweep(struct lib_copies *c)
{
	size_t holders = 0, held = 0;
	pid_t pid;

	for (size_t i = 0; i < c->nr_copies; i++)
		holders += c->copies[i].nr_holders;
	/*
	 * Once a second at most (the sweep runs at every event): each turn
	 * takes the pid out of every copy's holders, so at most as many turns
	 * as holders.
	 */
	if (holders && mono_seconds() - c->holders_t >= HOLDERS_CHECK_S) {
		c->holders_t = mono_seconds();
		while (holders-- && (pid = gone_holder(c)))
			lib_copies__exited(c, pid);
	}
	for (size_t i = 0; i < c->nr_copies; i++) {
		struct lib_copy *copy = &c->copies[i];

		if (!copy->info.idle || idle_copies__sweep(file_remains(copy)) == IDLE_KEEP)
			continue;
		detach_copy(c, copy);
		notemsg("detached copy %s, dev %u:%u inode %lu: its file is gone", copy->display,
			major(copy->info.dev), minor(copy->info.dev), (unsigned long)copy->info.ino);
	}
	for (size_t i = 0; i < c->nr_copies; i++)
		held += c->copies[i].nr_holders > 0;
	return count_idle(c).nr_idle + held;
}

void lib_copies__set_max_idle(struct lib_copies *c, size_t max_idle)
{
	c->max_idle = max_idle;
}

int lib_copies__detach_all(struct lib_copies *c, int timeout_ms)
{
	struct timespec t;
	double deadline;

	if (!c)
		return 0;
	for (size_t i = 0; i < c->nr_copies; i++) {
		release_attacher(c, c->copies[i].attacher);
		c->copies[i].attacher = NULL;
	}
	deadline = mono_seconds() + timeout_ms / 1e3;
	for (size_t i = 0; i < c->nr_detachers; i++) {
		while (!detacher__done(c->detachers[i])) {
			if (mono_seconds() >= deadline)
				return 1;
			t = (struct timespec){ .tv_nsec = 1000000 };
			nanosleep(&t, NULL);
		}
	}
	return 0;
}

/* Copies whose links are the set's to change: attached and not a primary. */
static bool relinkable(const struct lib_copy *copy)
{
	return copy->info.origin != COPY_PRIMARY && !copy->info.detached && !copy->failed;
}

/* Whether the functions of the table's library lib that the links hold differ between a and b (NULL: all). */
static bool lib_changed(const struct lib_copies *c, size_t lib, const bool *a, const bool *b)
{
	const struct probe_lib *l = &c->table->libs[lib];

	for (size_t i = l->first_func; i < l->first_func + l->nr_funcs; i++)
		if ((a ? a[i] : true) != (b ? b[i] : true))
			return true;
	return false;
}

int lib_copies__unlink_changed(struct lib_copies *c, const bool *on, struct attacher ***old, size_t *nr)
{
	size_t n = c->table->nr_funcs;
	bool *linked = malloc(n ?: 1);

	*old = NULL;
	*nr = 0;
	if (!linked)
		return -ENOMEM;
	memcpy(linked, on, n * sizeof(*on));
	for (size_t i = 0; i < c->nr_copies; i++) {
		struct lib_copy *copy = &c->copies[i];
		struct attacher **slot;

		if (!relinkable(copy) || !lib_changed(c, copy->info.lib, c->linked, linked))
			continue;
		copy->unlinked = true;
		copy->info.nr_funcs = 0;
		if (!copy->attacher)
			continue;
		slot = ARRAY_SLOT(*old, *nr);
		if (!slot) {
			/* Closed here: slower than with the others, but closed before the new links. */
			attacher__free(copy->attacher);
		} else {
			*slot = copy->attacher;
			(*nr)++;
		}
		copy->attacher = NULL;
	}
	free(c->linked);
	c->linked = linked;
	return 0;
}

int lib_copies__relink(struct lib_copies *c)
{
	int err = 0;

	for (size_t i = 0; i < c->nr_copies; i++) {
		struct lib_copy *copy = &c->copies[i];
		int ret;

		if (!copy->unlinked)
			continue;
		copy->unlinked = false;
		ret = attach_copy(c, copy);
		if (ret) {
			warnmsg("cannot attach probes to the copy %s again: %s; its calls are not counted",
			       copy->display, attach_strerror(ret));
			attacher__free(copy->attacher);
			copy->attacher = NULL;
			copy->info.nr_funcs = 0;
			err = err ?: ret;
		}
	}
	return err;
}

int lib_copies__attach_subset(struct lib_copies *c, const bool *on, struct attacher ***out, size_t *nr)
{
	int err = 0;

	*out = NULL;
	*nr = 0;
	for (size_t i = 0; i < c->nr_copies && !err; i++) {
		struct lib_copy *copy = &c->copies[i];
		struct attacher *a = NULL, **slot;

		if (!relinkable(copy))
			continue;
		err = attach_funcs(c, copy, on, &a);
		if (!a)
			continue;
		slot = ARRAY_SLOT(*out, *nr);
		if (!slot) {
			attacher__free(a);
			err = err ?: -ENOMEM;
			continue;
		}
		*slot = a;
		(*nr)++;
	}
	return err;
}

const struct lib_copy_info *lib_copies__list(struct lib_copies *c, size_t *cnt)
{
	struct lib_copy_info *infos = realloc(c->infos, (c->nr_copies + 1) * sizeof(*infos));

	*cnt = 0;
	if (!infos)
		return NULL;
	c->infos = infos;
	for (size_t i = 0; i < c->nr_copies; i++) {
		infos[i] = c->copies[i].info;
		infos[i].display = c->copies[i].display;
	}
	*cnt = c->nr_copies;
	return infos;
}

void lib_copies__free(struct lib_copies *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_copies; i++) {
		struct lib_copy *copy = &c->copies[i];

		attacher__free(copy->attacher);
		copy_funcs__free(&copy->funcs);
		free(copy->holders);
		free(copy->aliases);
		free(copy->host_path);
		if (copy->info.origin != COPY_PRIMARY) {
			free(copy->path);
			free(copy->display);
		}
	}
	for (size_t i = 0; i < c->nr_detachers; i++)
		detacher__free(c->detachers[i]);
	free(c->detachers);
	free(c->copies);
	free(c->infos);
	free(c->linked);
	free(c);
}
