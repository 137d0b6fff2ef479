// SPDX-License-Identifier: GPL-2.0-only
/* Container ids in cgroup path components, as the runtimes name them (recorded forms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probe/cgroup_target.h"

#define ID "4f1e9c2ab37d8e6f0a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"

static const char *id_of(const char *component)
{
	static char buf[80];
	size_t len;
	const char *id = cgroup_container_id(component, strlen(component), &len);

	if (!id)
		return NULL;
	memcpy(buf, id, len);
	buf[len] = '\0';
	return buf;
}

static void test_runtime_forms(void **state)
{
	static const char *const forms[] = {
		"docker-" ID ".scope",		/* docker, systemd driver (system.slice) */
		"cri-containerd-" ID ".scope",	/* containerd CRI, systemd driver (kubepods-*.slice) */
		"crio-" ID ".scope",		/* CRI-O, systemd driver */
		"libpod-" ID ".scope",		/* podman, systemd driver (machine.slice) */
		"libpod-" ID,			/* podman, cgroupfs driver (/libpod_parent) */
		ID,				/* docker /docker/<id>, kubepods cgroupfs .../pod<uid>/<id> */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *id = id_of(forms[i]);

		if (!id || strcmp(id, ID))
			fail_msg("%s: got %s", forms[i], id ? id : "nothing");
	}
}

static void test_not_containers(void **state)
{
	static const char *const others[] = {
		"libpod-conmon-" ID ".scope",	/* podman's monitor, not the container */
		"system.slice", "kubepods-besteffort.slice", "pod1234abcd",
		"docker-" ID ".service", "docker-" ID "0.scope", "docker-" "4f1e9c2a.scope",
		"libpod-" "zz1e9c2ab37d8e6f0a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f" ".scope",
		"",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		if (id_of(others[i]))
			fail_msg("%s taken for a container", others[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_runtime_forms),
		cmocka_unit_test(test_not_containers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
