/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A container's name from its runtime's own metadata, where it can be
 * read: podman (containers/storage's containers.json), docker
 * (containers/<id>/config.v2.json). containerd and CRI-O keep theirs in
 * databases we do not read: their containers show the short id.
 */
#ifndef DLPROF_CONTAINER_NAMES_H
#define DLPROF_CONTAINER_NAMES_H

#include <stddef.h>

/* Where the runtimes keep their state; tests point them elsewhere. */
struct container_roots {
	const char *podman;	/* containers/storage's graph root: /var/lib/containers/storage */
	const char *docker;	/* /var/lib/docker */
};

/*
 * The name of the container whose full id is id, into buf (sz bytes).
 * roots NULL: the runtimes' default places. 0, or -ENOENT when no runtime
 * names it (the caller shows the short id).
 */
int container_name(const char *id, const struct container_roots *roots, char *buf, size_t sz);
/*
 * Read the name of container id now and keep it: container_name() gives it
 * after the runtime forgot it (a --rm container's entry is gone by the
 * end of a profile). 0, or -ENOENT when no runtime names it.
 */
int container_names_remember(const char *id, const struct container_roots *roots);
/* The same for every container podman lists now. Returns how many it lists. */
int container_names_remember_all(const struct container_roots *roots);
/*
 * The directories whose files list podman's containers (one per storage
 * driver), for a caller to watch: *dirs (the caller frees each and the
 * array), 0 or -errno.
 */
int container_names_dirs(const struct container_roots *roots, char ***dirs, size_t *nr);

#endif /* DLPROF_CONTAINER_NAMES_H */
