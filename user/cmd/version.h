/* SPDX-License-Identifier: GPL-2.0-only */
/* --version, and with -v what this kernel offers the profiler. */
#ifndef DLPROF_CMD_VERSION_H
#define DLPROF_CMD_VERSION_H

#include <stdio.h>

void version_print(FILE *out, int verbose);

#endif /* DLPROF_CMD_VERSION_H */
