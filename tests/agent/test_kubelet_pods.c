// SPDX-License-Identifier: GPL-2.0-only
/* The kubelet's /pods answer: pod UID to name and namespace, from a recorded PodList. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/kubelet_pods.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 16);

	assert_non_null(f);
	assert_non_null(buf);
	*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

static void test_recorded_pod_list(void **state)
{
	struct kubelet_pods pods;
	const struct kubelet_pod *p;
	char err[256] = "";
	size_t len;
	char *json = slurp(KUBELET_PODS_JSON, &len);

	(void)state;
	assert_int_equal(kubelet_pods_parse(json, len, &pods, err, sizeof(err)), 0);
	/* Pods without a full identity are skipped. */
	assert_int_equal(pods.nr, 2);
	p = kubelet_pods_find(&pods, "9e4a1c2b-3d5f-4a6b-8c7d-0e1f2a3b4c5d");
	assert_non_null(p);
	assert_string_equal(p->name, "web-7d9c8b6f5-x2x4z");
	assert_string_equal(p->namespace, "shop");
	p = kubelet_pods_find(&pods, "0b3c6f4e-6f0a-4c1e-9d62-2f1a7c9e5b10");
	assert_non_null(p);
	assert_string_equal(p->namespace, "kube-system");
	assert_null(kubelet_pods_find(&pods, "00000000-0000-0000-0000-000000000000"));
	kubelet_pods_free(&pods);
	free(json);
}

static void test_not_a_pod_list(void **state)
{
	struct kubelet_pods pods;
	char err[256] = "";
	static const char *const bad[] = { "", "{", "[]", "{\"items\": 3}", "<html>Unauthorized</html>" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(kubelet_pods_parse(bad[i], strlen(bad[i]), &pods, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "not a pod list"));
		kubelet_pods_free(&pods);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_pod_list),
		cmocka_unit_test(test_not_a_pod_list),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
