// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dlprof.h"
#include "util/messages.h"
#include "probe/probe_attach.h"

/*
 * The file at path, opened once for all its probes: the kernel resolves each
 * probe's path anew, and a path through /proc/PID/root ends with that
 * process (its next probe would fail with ENOENT, the file still there).
 * /proc/self/fd/N names the very file opened, whoever holds PID later.
 */
static int attach_file_pinned(struct attacher *a, const char *path, const uint64_t *offsets,
			      const uint64_t *cookies, size_t n, struct attach_skip **skips, size_t *nr_skips)
{
	char pinned[64];
	int fd, err;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(pinned, sizeof(pinned), "/proc/self/fd/%d", fd);
	err = attacher__attach_file(a, pinned, offsets, cookies, n, skips, nr_skips);
	close(fd);
	return err;
}

int attach_file_subset(struct attacher *a, const char *path, const uint64_t *offsets, const uint64_t *cookies,
		       size_t n, const bool *on, uint64_t gate, struct attach_skip **skips, size_t *nr_skips)
{
	uint64_t *offs, *cooks;
	size_t *from, k = 0;
	int err = 0;

	*skips = NULL;
	*nr_skips = 0;
	if (!on && !gate)
		return n ? attach_file_pinned(a, path, offsets, cookies, n, skips, nr_skips) : 0;
	offs = calloc(n ?: 1, sizeof(*offs));
	cooks = calloc(n ?: 1, sizeof(*cooks));
	from = calloc(n ?: 1, sizeof(*from));
	if (!offs || !cooks || !from)
		err = -ENOMEM;
	for (size_t i = 0; i < n && !err; i++) {
		if (on && !on[cookies[i] & DLPROF_COOKIE_ID_MASK])
			continue;
		offs[k] = offsets[i];
		cooks[k] = cookies[i] | gate;
		from[k++] = i;
	}
	if (!err && k)
		err = attach_file_pinned(a, path, offs, cooks, k, skips, nr_skips);
	/* The caller knows its own offsets: each skip's index into them. */
	for (size_t s = 0; s < *nr_skips; s++)
		(*skips)[s].index = from[(*skips)[s].index];
	free(offs);
	free(cooks);
	free(from);
	return err;
}

int probe_table__attach(const struct probe_table *t, struct attacher *a, bool verbose, size_t *skipped,
			const char **failed)
{
	*failed = NULL;
	for (size_t i = 0; i < t->nr_libs; i++) {
		const struct probe_lib *lib = &t->libs[i];
		struct attach_skip *skips = NULL;
		size_t nr_skips = 0;
		int err;

		if (!lib->nr_funcs)
			continue;
		/* Resolved in the target's namespace, yet not loaded there: maybe later (dlopen), maybe never. */
		if (lib->file->unmapped)
			warnmsg("the target process does not map %s (yet); its calls count only once it "
				"loads this very file", lib->file->display);
		err = attach_file_subset(a, lib->file->path, t->offsets + lib->first_func, t->cookies + lib->first_func,
					 lib->nr_funcs, NULL, 0, &skips, &nr_skips);
		if (err) {
			free(skips);
			*failed = lib->file->display;
			return err;
		}
		for (size_t k = 0; k < nr_skips && verbose; k++)
			warnmsg("%s in %s cannot be probed (%s); left out",
				t->funcs[lib->first_func + skips[k].index].name, lib->file->display,
				attach_strerror(skips[k].err));
		if (nr_skips && !verbose)
			warnmsg("%zu functions of %s cannot be probed and were left out", nr_skips, lib->file->display);
		*skipped += nr_skips;
		free(skips);
	}
	return 0;
}

int probe_table__attach_subset(const struct probe_table *t, struct attacher *a, const bool *on, size_t lo,
			       size_t hi, uint64_t gate, size_t *skipped)
{
	int ret = 0;

	for (size_t l = 0; l < t->nr_libs && !ret; l++) {
		const struct probe_lib *lib = &t->libs[l];
		size_t first = lib->first_func > lo ? lib->first_func : lo;
		size_t end = lib->first_func + lib->nr_funcs < hi ? lib->first_func + lib->nr_funcs : hi;
		struct attach_skip *skips = NULL;
		size_t nr_skips = 0;

		if (first >= end)
			continue;
		ret = attach_file_subset(a, lib->file->path, t->offsets + first, t->cookies + first, end - first, on,
					 gate, &skips, &nr_skips);
		*skipped += nr_skips;
		free(skips);
	}
	return ret;
}
