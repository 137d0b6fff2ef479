/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Library files in the node's image stores, found before any container
 * maps them: the layers of podman and CRI-O (containers/storage's overlay
 * driver), docker's overlay2 and containerd's overlayfs snapshots. A
 * container's mapping of such a file maps the layer's own inode (overlayfs
 * hands the real file to mmap), so probes attached to the layer's file
 * fire in every container of the image from its first instruction.
 */
#ifndef DLPROF_IMAGE_LAYERS_H
#define DLPROF_IMAGE_LAYERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the stores are; tests point them elsewhere. NULL members: not looked at. */
struct image_stores {
	const char *storage;	/* containers/storage's graph root: /var/lib/containers/storage */
	const char *docker;	/* /var/lib/docker */
	const char *containerd;	/* /var/lib/containerd */
};

struct image_layers;

/* Whether a file of this name (no directory) is wanted. */
typedef bool (*image_wants_fn)(const char *base, void *ctx);
/* A wanted ELF file: path as the profiler opens it, display as the image has it. 0 or -errno (stops). */
typedef int (*image_found_fn)(const char *path, const char *display, void *ctx);

/* stores NULL: the runtimes' default places. NULL with errno set. */
struct image_layers *image_layers__new(const struct image_stores *stores);
/*
 * Walk the layers not walked before: containers/storage's complete image
 * layers (a diff digest in its layers.json; containers' own layers are
 * left out), and at the first call docker's and containerd's. found is
 * called for each wanted file. Returns how many were found, or -errno.
 */
int image_layers__scan(struct image_layers *il, image_wants_fn wants, image_found_fn found, void *ctx);
/* The directory whose changes (a layer added) call for another scan; NULL: none. */
const char *image_layers__watch_dir(const struct image_layers *il);
/* The file in that directory that changes: layers.json. */
#define IMAGE_LAYERS_LIST "layers.json"
void image_layers__free(struct image_layers *il);

/*
 * The layer file that a container mapped as path (its path inside the
 * image) and that is the file (dev, ino): overlayfs maps a layer's own
 * file, so a process that has exited is named from its layer while the
 * image is kept. stores NULL: the default places. 0 with the host's path
 * in out, or -ENOENT.
 */
int image_layers_find(const struct image_stores *stores, const char *path, uint64_t dev, uint64_t ino, char *out,
		      size_t sz);

#endif /* DLPROF_IMAGE_LAYERS_H */
