/* SPDX-License-Identifier: GPL-2.0-only */
/* Which inode a path ends at for the kernel's uprobes, through overlays and other namespaces' roots. */
#ifndef DLPROF_REAL_INODE_H
#define DLPROF_REAL_INODE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * "/proc/N/root/rest": N, and in *prefix_len the length of "/proc/N/root",
 * so that rest is read inside N's root; 0 when path does not go through a
 * process's root.
 */
pid_t proc_root_split(const char *path, size_t *prefix_len);

/*
 * The (dev, ino) a uprobe on the file at path attaches to (the kernel takes
 * d_real_inode()): stat()'s, except on an overlay, where it is the file of
 * the layer that holds it, found through the mount's upperdir and lowerdir
 * in the mountinfo of the namespace path is in (path may go through
 * /proc/PID/root). An overlay it cannot see through keeps stat()'s ids.
 * Returns 0 or -errno from stat().
 */
int real_inode_of(const char *path, dev_t *dev, ino_t *ino);
/*
 * The same, and in real (real_sz bytes) the path of that file: the
 * layer's file under an overlay (its upperdir and lowerdir name it as the
 * mounter, the host, sees it), else path itself; "" when too long.
 */
int real_file_of(const char *path, dev_t *dev, ino_t *ino, char *real, size_t real_sz);

#endif /* DLPROF_REAL_INODE_H */
