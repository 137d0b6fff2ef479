/* SPDX-License-Identifier: GPL-2.0-only */
#ifndef DLPROF_UTIL_PATH_H
#define DLPROF_UTIL_PATH_H

#include <string.h>

/* The last component of path (the whole of it without a slash); never modifies it, unlike basename(3). */
static inline const char *path_base(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

#endif /* DLPROF_UTIL_PATH_H */
