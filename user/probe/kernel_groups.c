// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "probe/caller_names.h"
#include "probe/cgroup_target.h"
#include "probe/kernel_groups.h"
#include "probe/pid_lives.h"
#include "probe/proc_info.h"
#include "stats_settle.h"
#include "util/array.h"

#define PATH_MAX_CG 4096

/* What a group is called, found once per group and kept for the session. */
struct group_name {
	uint32_t pid;			/* caller: the process of the return address; 0 otherwise */
	uint64_t key;			/* tgid, cgroup id or return address */
	struct attr_group g;		/* its strings owned here */
	bool retired;			/* caller: its process exited; kept for the rows that point at it */
};

/* caller: the calls of processes that exited, moved out of the kernel's table. */
struct retired_group {
	__u32 func_id;
	__u32 pid;				/* caller,process: the process; 0 by caller */
	const char *comm;			/* caller,process: a retired name's */
	const char *caller, *caller_module;	/* a retired name's */
	const char *container_id, *cgroup;	/* caller_containers: the retired name's container */
	struct group_stats gs;			/* settled */
};

struct kernel_groups {
	enum attr_by by;
	bool caller_containers;		/* caller: rows per container too (the process's cgroup at first sight) */
	struct container_roots roots;
	bool default_roots;
	struct caller_names *callers;	/* caller: the files' symbols, read once */
	struct group_name *names;
	size_t nr_names, cap_names;
	struct func_profile *rows;
	struct func_stats *stats;	/* per row, while rows are merged */
	uint64_t *grouped;		/* caller: per function, the calls its rows hold */
	size_t nr_rows, cap_rows;
	struct pid_lives *lives;	/* caller: the processes seen in the table */
	struct retired_group *retired;
	size_t nr_retired, cap_retired;
	uint64_t root_id;		/* the root cgroup's id, once looked up */
	void (*meta_wait)(void *ctx);	/* between lookups of a cgroup path not written yet; NULL: sleep */
	void *meta_wait_ctx;
};

void kernel_groups__caller_containers(struct kernel_groups *kg)
{
	kg->caller_containers = true;
}

void kernel_groups__meta_wait(struct kernel_groups *kg, void (*wait)(void *ctx), void *ctx)
{
	kg->meta_wait = wait;
	kg->meta_wait_ctx = ctx;
}

struct kernel_groups *kernel_groups__new(enum attr_by by, const struct container_roots *roots)
{
	struct kernel_groups *kg = calloc(1, sizeof(*kg));

	if (!kg)
		return NULL;
	kg->by = by;
	kg->default_roots = !roots;
	if (roots)
		kg->roots = *roots;
	return kg;
}

void cgroup_meta_path(const struct cgroup_meta *m, char *buf, size_t sz)
{
	size_t off = 0;
	int n;

	buf[0] = '\0';
	if (m->truncated)
		off += (size_t)snprintf(buf, sz, "/...");
	for (__u32 i = m->levels < DLPROF_CGROUP_LEVELS ? m->levels : DLPROF_CGROUP_LEVELS; i-- > 0 && off < sz;) {
		n = snprintf(buf + off, sz - off, "/%.*s", DLPROF_CGROUP_NAME_LEN, m->names[i]);
		off += n > 0 ? (size_t)n : 0;
	}
	if (!buf[0])
		snprintf(buf, sz, "/");
}

bool cgroup_path_container(const char *path, char *id, size_t id_sz, size_t *end)
{
	const char *p = path;

	while (*p) {
		size_t len, id_len;
		const char *c;

		p += *p == '/';
		len = strcspn(p, "/");
		c = len ? cgroup_container_id(p, len, &id_len) : NULL;
		if (c) {
			snprintf(id, id_sz, "%.*s", (int)id_len, c);
			*end = (size_t)(p + len - path);
			return true;
		}
		p += len;
	}
	return false;
}

static struct group_name *find_name(struct kernel_groups *kg, uint32_t pid, uint64_t key)
{
	for (size_t i = 0; i < kg->nr_names; i++)
		if (kg->names[i].key == key && kg->names[i].pid == pid && !kg->names[i].retired)
			return &kg->names[i];
	return NULL;
}

/* A process's name and cgroup from proc_meta; unknown (NULL comm) when the map had no room. */
static int name_process(const struct kernel_maps *km, __u32 pid, struct attr_group *g)
{
	struct proc_meta m;

	g->pid = pid;
	if (bpf_map_lookup_elem(km->proc_meta_fd, &pid, &m))
		return 0;
	g->cgroup_id = m.cgroup_id;
	g->comm = strndup(m.comm, sizeof(m.comm));
	return g->comm ? 0 : -ENOMEM;
}

/*
 * The BPF side makes a group's entry at its first call, then writes its
 * cgroup's path (note_cgroup: an empty entry, then the names). A read in
 * between finds no path, or an empty one for a cgroup other than the
 * root, and a name is kept for the session: a container's calls would be
 * the host's for good. Such a path is looked up again, this many times
 * this far apart, before the group is named without it (the map may be
 * full).
 */
#define CGROUP_META_TRIES 10
#define CGROUP_META_WAIT_NS 100000L

static bool cgroup_meta_written(struct kernel_groups *kg, const struct kernel_maps *km, __u64 id,
				struct cgroup_meta *m)
{
	if (bpf_map_lookup_elem(km->cgroup_meta_fd, &id, m))
		return false;
	if (m->levels)
		return true;
	if (!kg->root_id)
		kg->root_id = cgroup_path_id("/");
	return id == kg->root_id;
}

/* A cgroup's path from cgroup_meta, and the container it is in, named where the runtime says. */
static int name_cgroup(struct kernel_groups *kg, const struct kernel_maps *km, __u64 id, struct attr_group *g)
{
	char path[DLPROF_CGROUP_LEVELS * (DLPROF_CGROUP_NAME_LEN + 1) + 8], cid[72], name[256];
	struct timespec wait = { 0, CGROUP_META_WAIT_NS };
	struct cgroup_meta m;
	size_t end;
	bool written;
	int tries = 1;

	g->cgroup_id = id;
	while (!(written = cgroup_meta_written(kg, km, id, &m)) && tries++ < CGROUP_META_TRIES) {
		if (kg->meta_wait)
			kg->meta_wait(kg->meta_wait_ctx);
		else
			nanosleep(&wait, NULL);
	}
	/* Still empty: named from what there is (the root's path), or without a path. */
	if (!written && bpf_map_lookup_elem(km->cgroup_meta_fd, &id, &m))
		return 0;
	cgroup_meta_path(&m, path, sizeof(path));
	if (cgroup_path_container(path, cid, sizeof(cid), &end)) {
		g->container_id = strdup(cid);
		if (container_name(cid, kg->default_roots ? NULL : &kg->roots, name, sizeof(name)))
			snprintf(name, sizeof(name), "%.12s", cid);
		g->container = strdup(name);
		if (!g->container_id || !g->container)
			return -ENOMEM;
		/* By container, the container's own cgroup: its processes may sit in cgroups below it. */
		if (kg->by == ATTR_BY_CONTAINER)
			path[end] = '\0';
	}
	g->cgroup = strdup(path);
	return g->cgroup ? 0 : -ENOMEM;
}

/*
 * The container of a caller's process, from its cgroup now (read when the
 * caller is first seen, and kept: the process may exit). A process gone
 * already, or outside containers, counts with the host's.
 */
static int name_caller_container(__u32 pid, struct attr_group *g)
{
	char path[PATH_MAX_CG], cid[72];
	size_t end;

	if (proc_cgroup2_path((pid_t)pid, path, sizeof(path)) ||
	    !cgroup_path_container(path, cid, sizeof(cid), &end))
		return 0;
	/* The container's own cgroup, as by container: its processes may sit in cgroups below it. */
	path[end] = '\0';
	g->container_id = strdup(cid);
	g->cgroup = strdup(path);
	return g->container_id && g->cgroup ? 0 : -ENOMEM;
}

/* A caller from where its return address was mapped at first sight. */
static int name_caller(struct kernel_groups *kg, const struct kernel_maps *km, __u32 pid, __u64 addr,
		       struct attr_group *g)
{
	int err;

	if (!kg->callers && !(kg->callers = caller_names__new()))
		return -ENOMEM;
	g->pid = pid;
	err = caller_names__name(kg->callers, km->caller_meta_fd, pid, addr, (char **)&g->caller_module,
				 (char **)&g->caller);
	if (!err && kg->caller_containers)
		err = name_caller_container(pid, g);
	return err;
}

static int name_group(struct kernel_groups *kg, const struct kernel_maps *km, __u32 pid, __u64 key,
		      struct attr_group *g)
{
	int err;

	if (kg->by == ATTR_BY_PROCESS)
		return name_process(km, (__u32)key, g);
	if (kg->by == ATTR_BY_CALLER)
		return name_caller(kg, km, pid, key, g);
	if (kg->by == ATTR_BY_CALLER_PROCESS) {
		/* The process as the BPF side saw it first: its name outlives it. */
		err = name_process(km, pid, g);
		return err ? err : name_caller(kg, km, pid, key, g);
	}
	return name_cgroup(kg, km, key, g);
}

static const struct attr_group *group_of(struct kernel_groups *kg, const struct kernel_maps *km, __u32 pid,
					 __u64 key)
{
	struct group_name *n = find_name(kg, pid, key), *grown;
	int err;

	if (n)
		return &n->g;
	if (kg->nr_names == kg->cap_names) {
		size_t cap = kg->cap_names ? 2 * kg->cap_names : 64;

		grown = realloc(kg->names, cap * sizeof(*grown));
		if (!grown)
			return NULL;
		kg->names = grown;
		kg->cap_names = cap;
	}
	n = &kg->names[kg->nr_names];
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	n->key = key;
	err = name_group(kg, km, pid, key, &n->g);
	kg->nr_names++;
	return err ? NULL : &n->g;
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* caller,process: whether a and b are one process (the same pid and name); by any other key, yes. */
static bool same_process(const struct kernel_groups *kg, const struct attr_group *a, const struct attr_group *b)
{
	return kg->by != ATTR_BY_CALLER_PROCESS || (a->pid == b->pid && same_str(a->comm, b->comm));
}

/* The row a group's stats go to: by container, the row of the same function and container. */
static struct func_profile *row_for(struct kernel_groups *kg, __u32 func_id, const struct probe_table *t,
				    const struct attr_group *g, struct func_stats **stats)
{
	const struct probe_func *f = &t->funcs[func_id];
	struct func_profile *r;

	/*
	 * By container, and by caller (all its call sites, in every process;
	 * by caller,process in each process apart), rows are merged.
	 */
	for (size_t i = 0; (kg->by == ATTR_BY_CONTAINER || attr_by_has_caller(kg->by)) && i < kg->nr_rows; i++) {
		r = &kg->rows[i];
		if (r->func == (f->demangled ?: f->name) && r->lib == t->libs[f->lib].file->display &&
		    same_str(r->group.container_id, g->container_id) && same_str(r->group.caller, g->caller) &&
		    same_str(r->group.caller_module, g->caller_module) && same_process(kg, &r->group, g)) {
			*stats = &kg->stats[i];
			return r;
		}
	}
	if (kg->nr_rows == kg->cap_rows) {
		size_t cap = kg->cap_rows ? 2 * kg->cap_rows : 64;
		struct func_profile *rows = realloc(kg->rows, cap * sizeof(*rows));
		struct func_stats *st;

		if (!rows)
			return NULL;
		kg->rows = rows;
		st = realloc(kg->stats, cap * sizeof(*st));
		if (!st)
			return NULL;
		kg->stats = st;
		kg->cap_rows = cap;
	}
	r = &kg->rows[kg->nr_rows];
	*stats = &kg->stats[kg->nr_rows++];
	memset(r, 0, sizeof(*r));
	memset(*stats, 0, sizeof(**stats));
	r->lib = t->libs[f->lib].file->display;
	r->func = f->demangled ?: f->name;
	r->mangled = f->demangled ? f->name : NULL;
	r->entry_only = f->entry_only;
	r->stepped = f->stepped;
	r->group = *g;
	if (kg->by == ATTR_BY_CALLER)
		r->group.pid = 0;	/* a caller's row holds every process's calls */
	if (kg->by == ATTR_BY_CONTAINER && !g->container_id)
		r->group.cgroup = NULL;	/* the host: many cgroups, one row */
	return r;
}

static int add_named(struct kernel_groups *kg, const struct probe_table *t, __u32 func_id,
		     const struct attr_group *g, const struct group_stats *gs)
{
	struct func_stats *st;
	struct func_profile *r = row_for(kg, func_id, t, g, &st);

	if (!r)
		return -ENOMEM;
	/* calls stand in s.calls until the summary is built. */
	r->s.calls += gs->calls;
	if (kg->grouped)
		kg->grouped[func_id] += gs->calls;
	func_stats_merge(st, &gs->s);
	return 0;
}

static int add_group(struct kernel_groups *kg, const struct kernel_maps *km, const struct probe_table *t,
		     const struct group_key *key, const struct group_stats *gs)
{
	const struct attr_group *g;

	if (key->func_id >= t->nr_funcs)
		return 0;
	g = group_of(kg, km, key->pid, key->group);
	if (!g)
		return -ENOMEM;
	return add_named(kg, t, key->func_id, g, gs);
}

/* The calls of the processes that exited, each under the name it had then. */
static int add_retired(struct kernel_groups *kg, const struct probe_table *t)
{
	int err = 0;

	for (size_t i = 0; i < kg->nr_retired && !err; i++) {
		const struct retired_group *rg = &kg->retired[i];
		const struct attr_group g = { .pid = rg->pid, .comm = rg->comm, .caller = rg->caller,
					      .caller_module = rg->caller_module,
					      .container_id = rg->container_id, .cgroup = rg->cgroup };

		if (rg->func_id < t->nr_funcs)
			err = add_named(kg, t, rg->func_id, &g, &rg->gs);
	}
	return err;
}

/*
 * By caller a call is grouped at its return, where the kernel hands over
 * the return address: calls that made none (left by longjmp, still
 * running, their thread gone) and those the full table could not hold are
 * the rest of their function's count, in one row per function.
 */
static int add_unattributed(struct kernel_groups *kg, const struct kernel_maps *km, const struct probe_table *t)
{
	static const struct attr_group rest = { .caller = "(unattributed)", .caller_module = "-" };
	uint64_t *calls = calloc(t->nr_funcs ? t->nr_funcs : 1, sizeof(*calls));
	struct func_stats *st;
	struct func_profile *r;
	int err;

	if (!calls)
		return -ENOMEM;
	err = kernel_calls_read(km, t->nr_funcs, calls);
	for (size_t f = 0; !err && f < t->nr_funcs; f++) {
		if (calls[f] <= kg->grouped[f])
			continue;
		r = row_for(kg, (__u32)f, t, &rest, &st);
		if (!r)
			err = -ENOMEM;
		else
			r->s.calls += calls[f] - kg->grouped[f];
	}
	free(calls);
	return err;
}

int kernel_groups__read(struct kernel_groups *kg, const struct kernel_maps *km, const struct probe_table *t,
			const struct func_profile **rows, size_t *n)
{
	struct group_key key, next;
	struct group_stats *gs;
	void *prev = NULL;
	int err = 0;

	kg->nr_rows = 0;
	if (attr_by_has_caller(kg->by)) {
		free(kg->grouped);
		kg->grouped = calloc(t->nr_funcs ? t->nr_funcs : 1, sizeof(*kg->grouped));
		if (!kg->grouped)
			return -ENOMEM;
	}
	gs = malloc(sizeof(*gs));
	if (!gs)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(km->groups_fd, prev, &next)) {
		key = next;
		prev = &key;
		/* Removed between the two calls: nothing to read. */
		if (bpf_map_lookup_elem(km->groups_fd, &key, gs))
			continue;
		func_stats_settle(&gs->s);
		err = add_group(kg, km, t, &key, gs);
	}
	free(gs);
	if (!err)
		err = add_retired(kg, t);
	if (!err && kg->grouped)
		err = add_unattributed(kg, km, t);
	for (size_t i = 0; i < kg->nr_rows && !err; i++)
		func_summary_build(&kg->rows[i].s, &kg->stats[i], kg->rows[i].s.calls);
	*rows = kg->rows;
	*n = err ? 0 : kg->nr_rows;
	return err;
}

/* A container's cgroup that no longer exists under the cgroup2 mount at root. */
static bool container_removed(const struct attr_group *g, const char *root)
{
	char path[PATH_MAX_CG];

	if (!g->container_id || !g->cgroup)
		return false;
	snprintf(path, sizeof(path), "%s%s", root, g->cgroup);
	return access(path, F_OK) && errno == ENOENT;
}

/* The strings a cached name owns. */
static void free_name(const struct attr_group *g)
{
	free((char *)g->comm);
	free((char *)g->cgroup);
	free((char *)g->container_id);
	free((char *)g->container);
	free((char *)g->caller);
	free((char *)g->caller_module);
}

/* The names of the cgroups forgotten out of the cache (their strings freed). */
static void forget_names(struct kernel_groups *kg, const struct kernel_maps *km, const char *root)
{
	size_t kept = 0;

	for (size_t i = 0; i < kg->nr_names; i++) {
		struct group_name *n = &kg->names[i];

		if (container_removed(&n->g, root)) {
			bpf_map_delete_elem(km->cgroup_meta_fd, &n->key);
			free_name(&n->g);
			continue;
		}
		kg->names[kept++] = *n;
	}
	kg->nr_names = kept;
}

/* Caller rows of exited processes in removed containers: their names go next (forget_names). */
static void forget_retired(struct kernel_groups *kg, const char *root)
{
	size_t kept = 0;

	for (size_t i = 0; i < kg->nr_retired; i++) {
		const struct retired_group *rg = &kg->retired[i];
		const struct attr_group g = { .container_id = rg->container_id, .cgroup = rg->cgroup };

		if (!container_removed(&g, root))
			kg->retired[kept++] = *rg;
	}
	kg->nr_retired = kept;
}

int kernel_groups__forget_removed(struct kernel_groups *kg, const struct kernel_maps *km)
{
	struct group_key key, next, *gone = NULL;
	size_t nr = 0, cap = 0;
	char root[PATH_MAX_CG];
	void *prev = NULL;
	int ret = 0;

	if (kg->by != ATTR_BY_CONTAINER && kg->by != ATTR_BY_CGROUP && !kg->caller_containers)
		return 0;
	if (cgroup2_mount(root, sizeof(root)))
		return -ENOENT;
	forget_retired(kg, root);
	/* Collected first: deleting while walking a hash map restarts the walk. */
	while (!bpf_map_get_next_key(km->groups_fd, prev, &next)) {
		const struct attr_group *g = group_of(kg, km, next.pid, next.group);

		key = next;
		prev = &key;
		if (!g || !container_removed(g, root))
			continue;
		if (nr == cap) {
			struct group_key *p = realloc(gone, (cap = cap ? 2 * cap : 64) * sizeof(*p));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			gone = p;
		}
		gone[nr++] = key;
	}
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(km->groups_fd, &gone[i]);
	free(gone);
	if (!ret)
		forget_names(kg, km, root);
	return ret ? ret : (int)nr;
}

static int cmp_pid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static bool pid_in(const uint32_t *pids, size_t n, uint32_t pid)
{
	return n && bsearch(&pid, pids, n, sizeof(*pids), cmp_pid);
}

/* The distinct processes of the table's entries, sorted. */
static int table_pids(const struct kernel_maps *km, uint32_t **pids, size_t *n)
{
	struct group_key key, next;
	size_t cap = 0, nr = 0, kept = 0;
	void *prev = NULL;

	*pids = NULL;
	while (!bpf_map_get_next_key(km->groups_fd, prev, &next)) {
		key = next;
		prev = &key;
		if (ARRAY_RESERVE(*pids, cap, nr + 1))
			return -ENOMEM;
		(*pids)[nr++] = key.pid;
	}
	if (nr)
		qsort(*pids, nr, sizeof(**pids), cmp_pid);
	for (size_t i = 0; i < nr; i++)
		if (!kept || (*pids)[kept - 1] != (*pids)[i])
			(*pids)[kept++] = (*pids)[i];
	*n = kept;
	return 0;
}

/* Of pids, in place, the processes that exited since they were seen (their pid maybe held by another). */
static int keep_exited(struct kernel_groups *kg, uint32_t *pids, size_t *n)
{
	size_t kept = 0;
	int err = 0;

	for (size_t i = 0; i < *n && !err; i++) {
		uint64_t start = 0;

		if (proc_start_time((pid_t)pids[i], &start))
			start = 0;
		if (pid_lives__ended(kg->lives, pids[i], start, &err))
			pids[kept++] = pids[i];
	}
	*n = kept;
	return err;
}

/* One function's calls at one caller of an exited process, merged into that caller's retired row. */
static int retire_stats(struct kernel_groups *kg, __u32 func_id, const struct attr_group *g,
			const struct group_stats *gs)
{
	struct retired_group *rg = NULL;
	/* By caller, one row for every process's calls. */
	__u32 pid = kg->by == ATTR_BY_CALLER_PROCESS ? g->pid : 0;
	const char *comm = pid ? g->comm : NULL;

	for (size_t i = 0; i < kg->nr_retired && !rg; i++)
		if (kg->retired[i].func_id == func_id && same_str(kg->retired[i].caller, g->caller) &&
		    same_str(kg->retired[i].caller_module, g->caller_module) && kg->retired[i].pid == pid &&
		    same_str(kg->retired[i].comm, comm) && same_str(kg->retired[i].container_id, g->container_id))
			rg = &kg->retired[i];
	if (!rg) {
		if (ARRAY_RESERVE(kg->retired, kg->cap_retired, kg->nr_retired + 1))
			return -ENOMEM;
		rg = &kg->retired[kg->nr_retired++];
		memset(rg, 0, sizeof(*rg));
		rg->func_id = func_id;
		rg->pid = pid;
		rg->comm = comm;
		rg->caller = g->caller;
		rg->caller_module = g->caller_module;
		rg->container_id = g->container_id;
		rg->cgroup = g->cgroup;
	}
	rg->gs.calls += gs->calls;
	func_stats_merge(&rg->gs.s, &gs->s);
	return 0;
}

/* The keys of pids in a map whose keys start with a struct's pid (groups, caller_meta), deleted. */
static int delete_pids(int fd, size_t key_sz, size_t pid_off, const uint32_t *pids, size_t n)
{
	char key[sizeof(struct group_key) > sizeof(struct caller_site) ? sizeof(struct group_key)
								       : sizeof(struct caller_site)];
	char *gone = NULL;
	size_t nr = 0, cap = 0;
	void *prev = NULL;
	uint32_t pid;

	/* Collected first: deleting while walking a hash map restarts the walk. */
	while (!bpf_map_get_next_key(fd, prev, key)) {
		prev = key;
		memcpy(&pid, key + pid_off, sizeof(pid));
		if (!pid_in(pids, n, pid))
			continue;
		if (array_reserve((void **)&gone, &cap, nr + 1, key_sz)) {
			free(gone);
			return -ENOMEM;
		}
		memcpy(gone + nr++ * key_sz, key, key_sz);
	}
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(fd, gone + i * key_sz);
	free(gone);
	return 0;
}

/* The exited processes' aggregates, named from their mappings, into the retired rows. */
static int retire_groups(struct kernel_groups *kg, const struct kernel_maps *km, const uint32_t *pids, size_t n)
{
	struct group_key key, next;
	struct group_stats *gs = malloc(sizeof(*gs));
	void *prev = NULL;
	int err = 0;

	if (!gs)
		return -ENOMEM;
	while (!err && !bpf_map_get_next_key(km->groups_fd, prev, &next)) {
		const struct attr_group *g;

		key = next;
		prev = &key;
		if (!pid_in(pids, n, key.pid) || bpf_map_lookup_elem(km->groups_fd, &key, gs))
			continue;
		func_stats_settle(&gs->s);
		g = group_of(kg, km, key.pid, key.group);
		err = g ? retire_stats(kg, key.func_id, g, gs) : -ENOMEM;
	}
	free(gs);
	return err;
}

int kernel_groups__exited(struct kernel_groups *kg, const struct kernel_maps *km, uint32_t **pids, size_t *n)
{
	int err;

	*pids = NULL;
	*n = 0;
	if (!attr_by_has_caller(kg->by))
		return 0;
	if (!kg->lives && !(kg->lives = pid_lives__new()))
		return -ENOMEM;
	err = table_pids(km, pids, n);
	if (!err)
		err = keep_exited(kg, *pids, n);
	if (err) {
		free(*pids);
		*pids = NULL;
		*n = 0;
	}
	return err;
}

static bool same_ptr(const char *a, const char *b)
{
	return a && a == b;
}

/* Whether a retired row borrows a string of n. */
static bool name_in_retired(const struct kernel_groups *kg, const struct group_name *n)
{
	for (size_t i = 0; i < kg->nr_retired; i++) {
		const struct retired_group *rg = &kg->retired[i];

		if (same_ptr(rg->caller, n->g.caller) || same_ptr(rg->caller_module, n->g.caller_module) ||
		    same_ptr(rg->container_id, n->g.container_id) || same_ptr(rg->cgroup, n->g.cgroup))
			return true;
	}
	return false;
}

/*
 * A long-running session (the agent) forgets the names of exited
 * processes that no retired row points at: a retired row holds the first
 * name of its (function, caller, container), so the names stay bounded
 * by the labels, not by the processes that come and go.
 */
static void drop_retired_names(struct kernel_groups *kg)
{
	size_t kept = 0;

	for (size_t i = 0; i < kg->nr_names; i++) {
		struct group_name *n = &kg->names[i];

		if (n->retired && !name_in_retired(kg, n)) {
			free_name(&n->g);
			continue;
		}
		kg->names[kept++] = *n;
	}
	kg->nr_names = kept;
}

int kernel_groups__retire(struct kernel_groups *kg, const struct kernel_maps *km, const uint32_t *pids, size_t n)
{
	int err;

	if (!attr_by_has_caller(kg->by) || !n)
		return 0;
	err = retire_groups(kg, km, pids, n);
	if (err)
		return err;
	for (size_t i = 0; i < kg->nr_names; i++)
		kg->names[i].retired |= pid_in(pids, n, kg->names[i].pid);
	if (kg->caller_containers)
		drop_retired_names(kg);
	err = delete_pids(km->groups_fd, sizeof(struct group_key), offsetof(struct group_key, pid), pids, n);
	if (!err)
		err = delete_pids(km->caller_meta_fd, sizeof(struct caller_site), offsetof(struct caller_site, pid),
				  pids, n);
	return err;
}

const struct func_stats *kernel_groups__stats(const struct kernel_groups *kg)
{
	return kg ? kg->stats : NULL;
}

void kernel_groups__free(struct kernel_groups *kg)
{
	if (!kg)
		return;
	for (size_t i = 0; i < kg->nr_names; i++) {
		free_name(&kg->names[i].g);
	}
	caller_names__free(kg->callers);
	pid_lives__free(kg->lives);
	free(kg->retired);
	free(kg->grouped);
	free(kg->names);
	free(kg->rows);
	free(kg->stats);
	free(kg);
}
