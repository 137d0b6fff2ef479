// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <sys/utsname.h>

#include "cmd/version.h"
#include "probe/session.h"

void version_print(FILE *out, int verbose)
{
	struct utsname u;
	char msg[256];

	fprintf(out, "dlprof-bpf %s\n", DLPROF_VERSION);
	if (!verbose)
		return;
	if (!uname(&u))
		fprintf(out, "kernel %s %s\n", u.release, u.machine);
	/* The feature probes load BPF programs: without the rights each would read "no". */
	if (session_preflight(msg, sizeof(msg)) == -EPERM) {
		fprintf(out, "kernel features: %s\n", msg);
		return;
	}
	fprintf(out, "kernel features:\n");
	session_print_kernel_features(out);
}
