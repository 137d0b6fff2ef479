// SPDX-License-Identifier: GPL-2.0-only
/*
 * Pod UID and container id from cgroup paths as kubelet and the runtimes
 * make them (recorded from nodes: systemd and cgroupfs drivers;
 * containerd, CRI-O, docker, podman), and the pod's name and namespace
 * from the container's files.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/k8s_meta.h"

#define ID "3f1e2d4c5b6a79881726354453627180a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4"
#define UID "7c4d1b1e-5f3a-4c8e-9b0d-2a1f3e4d5c6b"
#define UID_ "7c4d1b1e_5f3a_4c8e_9b0d_2a1f3e4d5c6b"

static const struct {
	const char *path;
	const char *pod_uid;	/* "": none */
	const char *runtime;	/* NULL: unknown */
	const char *driver;
} forms[] = {
	/* kubeadm's default: systemd driver, containerd */
	{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	  UID, "containerd", "systemd" },
	/* Guaranteed QoS: no QoS slice */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope", UID, "containerd", "systemd" },
	/* CRI-O, systemd */
	{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope",
	  UID, "cri-o", "systemd" },
	/* kind: kubelet nested under its own slice */
	{ "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
	  ".slice/cri-containerd-" ID ".scope", UID, "containerd", "systemd" },
	/* cgroupfs driver (containerd or cri-dockerd: the path does not say which) */
	{ "/kubepods/burstable/pod" UID "/" ID, UID, NULL, "cgroupfs" },
	{ "/kubepods/pod" UID "/" ID, UID, NULL, "cgroupfs" },
	/* docker without Kubernetes */
	{ "/system.slice/docker-" ID ".scope", "", "docker", "systemd" },
	{ "/docker/" ID, "", "docker", "cgroupfs" },
	/* podman (this machine's form, and under systemd) */
	{ "/libpod_parent/libpod-" ID, "", "podman", "cgroupfs" },
	{ "/machine.slice/libpod-" ID ".scope", "", "podman", "systemd" },
	/* a process in a child of the container's cgroup */
	{ "/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" ID ".scope/init", UID, "containerd", "systemd" },
};

static void test_cgroup_path_forms(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		struct k8s_ids ids;

		print_message("%s\n", forms[i].path);
		assert_int_equal(k8s_ids_from_cgroup(forms[i].path, &ids), 0);
		assert_string_equal(ids.container_id, ID);
		assert_string_equal(ids.pod_uid, forms[i].pod_uid);
		assert_string_equal(ids.driver, forms[i].driver);
		if (forms[i].runtime)
			assert_string_equal(ids.runtime, forms[i].runtime);
		else
			assert_null(ids.runtime);
	}
}

static void test_not_containers(void **state)
{
	static const char *const paths[] = {
		"/", "/user.slice/user-0.slice/session-1.scope", "/system.slice/containerd.service",
		/* conmon beside a CRI-O container is not the container */
		"/kubepods.slice/kubepods-pod" UID_ ".slice/crio-conmon-" ID ".scope",
		/* a pod's slice without a container below (the pause container's parent) */
		"/kubepods.slice/kubepods-pod" UID_ ".slice",
		/* an id one digit short */
		"/docker/3f1e2d4c5b6a79881726354453627180a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d",
	};
	struct k8s_ids ids;

	(void)state;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		assert_int_equal(k8s_ids_from_cgroup(paths[i], &ids), -ENOENT);
}

static void test_bad_pod_uids_ignored(void **state)
{
	struct k8s_ids ids;

	(void)state;
	/* not hex, and too short: the container stays, no pod */
	assert_int_equal(k8s_ids_from_cgroup("/kubepods/podzzzzzzzz-5f3a-4c8e-9b0d-2a1f3e4d5c6b/" ID, &ids), 0);
	assert_string_equal(ids.pod_uid, "");
	assert_int_equal(k8s_ids_from_cgroup("/kubepods/pod7c4d1b1e/" ID, &ids), 0);
	assert_string_equal(ids.pod_uid, "");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_pod_name_and_namespace_from_files(void **state)
{
	char root[] = "/tmp/k8s_meta_XXXXXX", path[512];
	struct k8s_meta m;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "mkdir -p %s/42/root/etc %s/42/root/var/run/secrets/kubernetes.io/serviceaccount "
		 "%s/43/root/etc", root, root, root);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/42/root/etc/hostname", root);
	write_file(path, "web-7d9c8b6f5-x2x4z\n");
	snprintf(path, sizeof(path), "%s/42/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", root);
	write_file(path, "shop");
	snprintf(path, sizeof(path), "%s/43/root/etc/hostname", root);
	write_file(path, "3f1e2d4c5b6a\n");

	assert_int_equal(k8s_meta_of_process(root, 42, "/kubepods/pod" UID "/" ID, &m), 0);
	assert_string_equal(m.pod, "web-7d9c8b6f5-x2x4z");
	assert_string_equal(m.namespace, "shop");
	assert_string_equal(m.ids.pod_uid, UID);
	/* A plain container has a hostname too, but no pod: no pod label. */
	assert_int_equal(k8s_meta_of_process(root, 43, "/docker/" ID, &m), 0);
	assert_string_equal(m.pod, "");
	assert_string_equal(m.namespace, "");
	assert_int_equal(k8s_meta_of_process(root, 44, "/user.slice", &m), -ENOENT);

	snprintf(path, sizeof(path), "rm -rf %s", root);
	assert_int_equal(system(path), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_path_forms),
		cmocka_unit_test(test_not_containers),
		cmocka_unit_test(test_bad_pod_uids_ignored),
		cmocka_unit_test(test_pod_name_and_namespace_from_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
