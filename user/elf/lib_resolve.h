/* SPDX-License-Identifier: GPL-2.0-only */
/* Turn a --lib argument (path, soname, glob) into library files on disk. */
#ifndef DLPROF_LIB_RESOLVE_H
#define DLPROF_LIB_RESOLVE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct lib_file {
	char *path;	/* a path the profiler can open(): absolute, through /proc/PID/root for a target's mount namespace */
	char *display;	/* the path as the target sees it (what reports print) */
	/*
	 * The inode uprobes attach to: under an overlay, the layer's file, not
	 * the overlay's inode (each container's mount has its own device), so
	 * two containers of one image share one copy.
	 */
	dev_t dev;
	ino_t ino;
	dev_t seen_dev;	/* what stat() and /proc/PID/maps show: the overlay's inode under one */
	ino_t seen_ino;
	pid_t ns_pid;	/* 0: found in our mount namespace; else through /proc/ns_pid/root */
	bool unmapped;	/* lib_resolve's pid (> 0) does not map it (yet) */
};

struct lib_list {
	struct lib_file *libs;
	size_t cnt;
};

/*
 * Resolve spec the way the dynamic linker would, appending to out and
 * skipping files already in it (same dev and inode).
 *  - spec with a '/': a path, may hold a glob (glob(3)); relative to cwd.
 *    An absolute path with pid > 0 is the file in pid's mount namespace
 *    (/proc/PID/root/path); a path through /proc/N/root/ is the file in
 *    N's namespace, its symlinks followed inside that root.
 *  - otherwise a file name or fnmatch(3) glob, looked up in order:
 *    1. pid > 0: the files mapped in /proc/PID/maps (through /proc/PID/root),
 *    2. LD_LIBRARY_PATH (of pid from /proc/PID/environ when pid > 0, else ours),
 *    3. the ld.so cache (/etc/ld.so.cache, or root_dir's when set),
 *    4. the standard directories (/lib/<multiarch>, /usr/lib/<multiarch>, /lib64, /usr/lib64, /lib, /usr/lib, /usr/local/lib).
 *    The first place that has a match wins. With pid 0 and no match on the
 *    host, the same search runs inside each mount namespace of a running
 *    process (through its /proc/PID/root) until one has it. A name without glob characters
 *    that matches nothing exactly also matches its versioned files
 *    ("libssl.so" finds "libssl.so.3").
 * Returns 0 with at least one file added (or already present), -ENOENT when
 * nothing matched, with a one-line list of the places searched written to
 * where (e.g. "/proc/42/maps, LD_LIBRARY_PATH, /etc/ld.so.cache, /lib/x86_64-linux-gnu, ..."),
 * or another -errno.
 * Other errors: -ESRCH when /proc/PID does not exist, -ENOEXEC when a path
 * spec matched only regular files that are not ELF (e.g. a linker script),
 * -EACCES when the target's /proc files are closed to us, -EINVAL for a
 * NULL/empty spec, NULL out or negative pid; where then names what failed.
 * On any error out is left as it was.
 */
int lib_resolve(const char *spec, pid_t pid, struct lib_list *out, char *where, size_t where_sz);
/*
 * Whether a file named base (no directory) is one the name spec (no '/')
 * resolves to wherever it is found: the name or glob itself, or an exact
 * name's versioned files. A spec with a '/' names no other file.
 */
bool lib_name_matches(const char *spec, const char *base);
/*
 * lib_resolve for the names a program loads (by DT_NEEDED or dlopen): a
 * name is also looked for in the program's DT_RPATH, before
 * LD_LIBRARY_PATH, and its DT_RUNPATH, after it, as ld.so does ($ORIGIN:
 * the program's directory). The program is pid's executable when pid > 0,
 * else exe (a path the profiler opens; NULL: none, as lib_resolve).
 */
int lib_resolve_program(const char *spec, pid_t pid, const char *exe, struct lib_list *out, char *where,
			size_t where_sz);
/* Whether /proc/PID/maps maps the file (dev, ino): 1, 0, or -errno (-ESRCH: gone). */
int lib_file_mapped_by(pid_t pid, dev_t dev, ino_t ino);
/* Frees the files and the array, not list itself: it is left empty and reusable. */
void lib_list__free(struct lib_list *list);

#endif /* DLPROF_LIB_RESOLVE_H */
