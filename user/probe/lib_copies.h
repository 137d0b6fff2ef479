/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The other copies of the profiled libraries: the same library as another
 * file (another inode), in a container's mount namespace or elsewhere on
 * the host. Each distinct (dev, ino) is attached once, with the functions
 * of the probe table's library of the same name (same ids, so a function's
 * calls are summed over its copies). Once no process maps it, a copy
 * whose file remains stays attached, idle (at most LIB_COPIES_MAX_IDLE;
 * detached once its file is gone), others are detached. The probe table's
 * own files are the primaries: never detached.
 */
#ifndef DLPROF_LIB_COPIES_H
#define DLPROF_LIB_COPIES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "probe/attach.h"
#include "probe/probe_table.h"

/*
 * Idle copies kept attached by default: each holds its uprobes (kernel
 * memory, no cost to a process that does not map it) and nothing else.
 */
#define LIB_COPIES_MAX_IDLE 64

enum lib_copy_origin {
	COPY_PRIMARY,		/* a file of the probe table */
	COPY_AT_START,		/* found at the start in a mount namespace or a process's maps */
	COPY_DISCOVERED,	/* a process mapped it later */
	COPY_IMAGE,		/* a file of an image's layer, found before any container maps it */
	COPY_REPLACED,		/* the new file at a path --lib named: kept, like the primary, to the end */
};

/* "primary", "start", "discovered": the one table of these names. */
const char *lib_copy_origin_name(enum lib_copy_origin origin);

/* One copy as a report names it. */
struct lib_copy_info {
	const char *display;	/* the path as the processes that map it see it */
	pid_t ns_pid;		/* 0: our mount namespace; else a process of the copy's namespace */
	dev_t dev;
	ino_t ino;
	enum lib_copy_origin origin;
	size_t lib;		/* the probe table's library it counts for */
	size_t nr_funcs;	/* functions attached */
	size_t nr_missing;	/* functions of the primary this copy does not have (another version) */
	bool detached;		/* no process mapped it any more */
	bool idle;		/* still attached, though no process maps it now (its file remains) */
	size_t attach_failures;	/* times its probes could not be attached: its calls then went uncounted */
	double attach_s;	/* seconds since the session started (0 for those at the start) */
	double discovery_ms;	/* COPY_DISCOVERED: from the kernel's first sight of the file to the probes in */
	double detach_s;
};

struct lib_copies;

/* What the set needs from whoever feeds it events (copy_discovery.h). */
struct lib_copies_hooks {
	/* Tell me when pid exits: how the set learns a copy may be unmapped. 0 or -errno. */
	int (*watch)(pid_t pid, void *ctx);
	/* The copy (dev, ino) was detached: report its next mapping again. */
	void (*forget)(dev_t dev, ino_t ino, void *ctx);
	/* A copy of library lib was attached: its mappings count for lib from now on. NULL: not wanted. */
	void (*attached)(dev_t dev, ino_t ino, size_t lib, void *ctx);
	/* NULL: every process's copies count; else only those of the processes it accepts. */
	bool (*in_target)(pid_t pid, void *ctx);
	void *ctx;
};

/*
 * specs: the --lib arguments; only names (no '/') have copies. The table,
 * progs and specs are borrowed and must outlive the set. start_unlinked:
 * copies are attached with no function linked until lib_copies__relink
 * says which (a front end with a budget); else with every function.
 */
struct lib_copies *lib_copies__new(const struct probe_table *t, const struct str_list *specs,
				   enum attach_mode mode, const struct attach_progs *progs,
				   const struct lib_copies_hooks *hooks, bool start_unlinked);
/* Whether a file named base (no directory) is a copy of one of the names. */
bool lib_copies__wants_name(const struct lib_copies *c, const char *base);
/*
 * Every copy running processes can reach now: each other mount namespace's
 * own resolution of the names (ld.so cache, directories, maps) and every
 * process's maps; with in_target, only the target processes' maps. Attaches
 * those not yet attached. Returns 0 or -errno.
 */
int lib_copies__scan(struct lib_copies *c);
/*
 * pid mapped a file named base (the kernel saw it at seen_s, CLOCK_MONOTONIC
 * seconds): attach the copy it is if new, else note pid as one of its holders. 1: the file was found in pid's maps (new or
 * not), 0: not there (yet, or pid is gone), -errno.
 */
int lib_copies__mapped(struct lib_copies *c, pid_t pid, const char *base, double seen_s);
/*
 * A file of an image's layer (path as we open it, display as the image has
 * it), attached idle before any process maps it, while fewer than the
 * limit of idle copies are. 1: attached now, 0: known or not wanted,
 * -ENOSPC: past the limit, -errno.
 */
int lib_copies__add_image_file(struct lib_copies *c, const char *path, const char *display);
/*
 * The file at path, a path the table's library lib was named by, is a new
 * inode (a package upgrade's cp + mv): attached as a copy of lib. The old
 * file's probes stay for the processes that still map it. 1: attached, 0:
 * known already, -errno: it could not be probed (its calls are not counted).
 */
int lib_copies__replaced(struct lib_copies *c, size_t lib, const char *path);
/* pid exited: copies it held that no process maps any more turn idle, or are detached. */
void lib_copies__exited(struct lib_copies *c, pid_t pid);
/*
 * Detach the idle copies whose file is gone, and treat a holder gone
 * without its exit reported as exited; returns how many copies stay idle
 * or held (then call again later).
 */
size_t lib_copies__sweep(struct lib_copies *c);
/* At most max_idle copies kept attached with no process mapping them (0: none, detached at once). */
void lib_copies__set_max_idle(struct lib_copies *c, size_t max_idle);
/*
 * Detach every copy (not the primaries, which the session's attacher
 * holds), waiting at most timeout_ms for the kernel to let them go. 0, or 1
 * when some detach was still under way (it goes on on its own thread).
 */
int lib_copies__detach_all(struct lib_copies *c, int timeout_ms);
/*
 * A front end with a budget links a subset of the functions (on, by
 * function id), in the copies as in the primaries. The links of each copy
 * whose subset changes are handed to the caller in *old (an array the
 * caller frees, with the attachers): closed together with the primaries'
 * changed links, their grace periods overlap. lib_copies__relink then
 * attaches those copies again with the new subset: after the old links
 * closed, or a call would count twice. 0 or -errno.
 */
int lib_copies__unlink_changed(struct lib_copies *c, const bool *on, struct attacher ***old, size_t *nr);
int lib_copies__relink(struct lib_copies *c);
/*
 * Links of their own for the functions on holds, in every attached copy
 * (a sampling window's): one attacher per copy that holds any, in *out (an
 * array the caller frees, with the attachers). 0 or -errno (*out holds
 * those made before).
 */
int lib_copies__attach_subset(struct lib_copies *c, const bool *on, struct attacher ***out, size_t *nr);
/* The copies so far, primaries first; valid until the next call that changes the set. */
const struct lib_copy_info *lib_copies__list(struct lib_copies *c, size_t *cnt);
void lib_copies__free(struct lib_copies *c);

#endif /* DLPROF_LIB_COPIES_H */
