/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Libraries named by path (--lib /usr/lib/libssl.so.3), followed across
 * replacement: a package upgrade writes the new file beside the old and
 * renames it over (cp + mv), so the path names a new inode while the
 * processes that mapped the old one keep running it. The directories are
 * watched (inotify, on the caller's fd); a path whose inode changed is
 * handed to the caller, which attaches the new file as a copy.
 */
#ifndef DLPROF_PATH_FOLLOW_H
#define DLPROF_PATH_FOLLOW_H

#include <stddef.h>

#include "probe/probe_table.h"
#include "util/str_list.h"

struct path_follow;

/*
 * The table's libraries that specs named by a path of ours (not through a
 * /proc/PID/root), watched on inotify_fd. NULL with errno set; a directory
 * that cannot be watched is a failure (path_follow__failures).
 */
struct path_follow *path_follow__new(const struct probe_table *t, const struct str_list *specs, int inotify_fd);
/* An inotify event (its watch and name): the paths it may concern are looked at by the next check. */
void path_follow__event(struct path_follow *pf, int wd, const char *name);
/* The path of the table's library lib names a new inode: attach it. 0, or -errno (counted as a failure). */
typedef int (*path_replaced_fn)(size_t lib, const char *path, void *ctx);
/* Look at the paths events concerned; replaced is called for each whose inode changed. */
void path_follow__check(struct path_follow *pf, path_replaced_fn replaced, void *ctx);
/* Named files that could not be followed: not watched, or their new file not probed. */
size_t path_follow__failures(const struct path_follow *pf);
void path_follow__free(struct path_follow *pf);

#endif /* DLPROF_PATH_FOLLOW_H */
