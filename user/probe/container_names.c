// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "probe/container_names.h"

static const struct container_roots default_roots = {
	.podman = "/var/lib/containers/storage",
	.docker = "/var/lib/docker",
};

static int copy_name(const char *name, char *buf, size_t sz)
{
	if (!name || !*name)
		return -ENOENT;
	return (size_t)snprintf(buf, sz, "%s", name) < sz ? 0 : -ENAMETOOLONG;
}

/* podman: [{"id": "<64 hex>", "names": ["web"], ...}, ...] in <driver>-containers/containers.json. */
static int podman_name_in(const char *file, const char *id, char *buf, size_t sz)
{
	struct json_object *doc = json_object_from_file(file), *c, *v, *names;
	int ret = -ENOENT;

	if (!doc || !json_object_is_type(doc, json_type_array)) {
		json_object_put(doc);
		return -ENOENT;
	}
	for (size_t i = 0; i < json_object_array_length(doc) && ret == -ENOENT; i++) {
		c = json_object_array_get_idx(doc, i);
		if (!json_object_object_get_ex(c, "id", &v) || strcmp(json_object_get_string(v) ?: "", id))
			continue;
		if (json_object_object_get_ex(c, "names", &names) && json_object_is_type(names, json_type_array) &&
		    json_object_array_length(names))
			ret = copy_name(json_object_get_string(json_object_array_get_idx(names, 0)), buf, sz);
	}
	json_object_put(doc);
	return ret;
}

static int podman_name(const char *root, const char *id, char *buf, size_t sz)
{
	char pattern[PATH_MAX];
	int ret = -ENOENT;
	glob_t g;

	/* One file per storage driver (overlay-containers, vfs-containers, ...). */
	snprintf(pattern, sizeof(pattern), "%s/*-containers/containers.json", root);
	if (glob(pattern, 0, NULL, &g))
		return -ENOENT;
	for (size_t i = 0; i < g.gl_pathc && ret == -ENOENT; i++)
		ret = podman_name_in(g.gl_pathv[i], id, buf, sz);
	globfree(&g);
	return ret;
}

/* docker: {"Name": "/web", ...} in containers/<id>/config.v2.json. */
static int docker_name(const char *root, const char *id, char *buf, size_t sz)
{
	struct json_object *doc, *v;
	char file[PATH_MAX];
	const char *name;
	int ret = -ENOENT;

	snprintf(file, sizeof(file), "%s/containers/%s/config.v2.json", root, id);
	doc = json_object_from_file(file);
	if (doc && json_object_object_get_ex(doc, "Name", &v)) {
		name = json_object_get_string(v);
		ret = copy_name(name && *name == '/' ? name + 1 : name, buf, sz);
	}
	json_object_put(doc);
	return ret;
}

int container_name(const char *id, const struct container_roots *roots, char *buf, size_t sz)
{
	if (!roots)
		roots = &default_roots;
	if (roots->podman && !podman_name(roots->podman, id, buf, sz))
		return 0;
	if (roots->docker && !docker_name(roots->docker, id, buf, sz))
		return 0;
	return -ENOENT;
}
