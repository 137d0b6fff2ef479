/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kubelet's pod list (GET /pods on its port 10250 with a bearer token,
 * or the read-only 10255): pod UID to name and namespace, for containers
 * whose own files do not say. No API server involved.
 */
#ifndef DLPROF_AGENT_KUBELET_PODS_H
#define DLPROF_AGENT_KUBELET_PODS_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/k8s_meta.h"

struct kubelet_pod {
	char uid[K8S_POD_UID_LEN + 1];
	char name[K8S_NAME_MAX + 1];
	char namespace[K8S_NAME_MAX + 1];
};

struct kubelet_pods {
	struct kubelet_pod *pods;
	size_t nr;
};

/* A /pods answer (a v1 PodList) into pods. 0, or -EINVAL with why in err. Pure, for tests. */
int kubelet_pods_parse(const char *json, size_t len, struct kubelet_pods *pods, char *err, size_t err_sz);
/* The pod of uid; NULL: not in the list. */
const struct kubelet_pod *kubelet_pods_find(const struct kubelet_pods *pods, const char *uid);
void kubelet_pods_free(struct kubelet_pods *pods);

struct kubelet_client_opts {
	const char *url;		/* https://NODE:10250 or http://NODE:10255; "/pods" is appended */
	const char *token_file;		/* bearer token, read at each fetch (it is rotated); NULL: none */
	const char *ca_file;		/* the kubelet's CA; NULL: the system's; "insecure": no verification */
};

/* GET /pods, parsed into pods (replaced on success). 0, or -errno with a one-line message in err. */
int kubelet_pods_fetch(const struct kubelet_client_opts *o, struct kubelet_pods *pods, char *err, size_t err_sz);

#endif /* DLPROF_AGENT_KUBELET_PODS_H */
