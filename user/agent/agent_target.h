/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The agent's target: --container and --cgroup resolved into cgroup v2
 * directories, and, for one container, the labels its series carry
 * (container id; the pod and namespace where k8s_meta finds them).
 */
#ifndef DLPROF_AGENT_TARGET_H
#define DLPROF_AGENT_TARGET_H

#include <stddef.h>

#include "agent/agent.h"
#include "agent/k8s_meta.h"
#include "util/str_list.h"

struct agent_target {
	struct str_list cgroups;	/* absolute v2 directories */
	bool labelled;			/* one container: meta holds its labels */
	struct k8s_meta meta;
};

/* 0, or -errno with a one-line message in err. */
int agent_target_resolve(const struct agent_opts *o, struct agent_target *t, char *err, size_t err_sz);
void agent_target_free(struct agent_target *t);

#endif /* DLPROF_AGENT_TARGET_H */
