// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>

#include "util/messages.h"
#include "probe/probe_attach.h"

int probe_table__attach(const struct probe_table *t, struct attacher *a, bool verbose, size_t *skipped)
{
	for (size_t i = 0; i < t->nr_libs; i++) {
		const struct probe_lib *lib = &t->libs[i];
		struct attach_skip *skips = NULL;
		size_t nr_skips = 0;
		int err;

		if (!lib->nr_funcs)
			continue;
		/* Resolved in the target's namespace, yet not loaded there: maybe later (dlopen), maybe never. */
		if (lib->file->unmapped)
			errmsg("warning: the target process does not map %s (yet); its calls count only once it "
			       "loads this very file", lib->file->display);
		err = attacher__attach_file(a, lib->file->path, t->offsets + lib->first_func,
					    t->cookies + lib->first_func, lib->nr_funcs, &skips, &nr_skips);
		if (err) {
			free(skips);
			/* A cancel is the caller's to say. */
			if (err != -ECANCELED)
				errmsg("cannot attach probes to %s: %s", lib->file->display, attach_strerror(err));
			return err;
		}
		for (size_t k = 0; k < nr_skips && verbose; k++)
			errmsg("warning: %s in %s cannot be probed (%s); left out",
			       t->funcs[lib->first_func + skips[k].index].name, lib->file->display,
			       attach_strerror(skips[k].err));
		if (nr_skips && !verbose)
			errmsg("warning: %zu functions of %s cannot be probed and were left out (-v lists them)",
			       nr_skips, lib->file->display);
		*skipped += nr_skips;
		free(skips);
	}
	return 0;
}
