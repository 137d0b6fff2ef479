// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "probe/container_names.h"

/* Names kept by container_names_remember(); past the last slot the oldest give way. */
#define REMEMBERED_NAMES 1024

static struct {
	char id[72];
	char name[256];
} remembered[REMEMBERED_NAMES];
static size_t nr_remembered;

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

static const char *remembered_name(const char *id);
static void keep_name(const char *id, const char *name);

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
		const char *cid;

		c = json_object_array_get_idx(doc, i);
		if (!json_object_object_get_ex(c, "id", &v) || !(cid = json_object_get_string(v)))
			continue;
		if (!json_object_object_get_ex(c, "names", &names) || !json_object_is_type(names, json_type_array) ||
		    !json_object_array_length(names))
			continue;
		/* id NULL: every one is kept. */
		if (!id)
			keep_name(cid, json_object_get_string(json_object_array_get_idx(names, 0)) ?: "");
		else if (!strcmp(cid, id))
			ret = copy_name(json_object_get_string(json_object_array_get_idx(names, 0)), buf, sz);
	}
	if (!id)
		ret = (int)json_object_array_length(doc);
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

static const char *remembered_name(const char *id)
{
	size_t n = nr_remembered < REMEMBERED_NAMES ? nr_remembered : REMEMBERED_NAMES;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(remembered[i].id, id))
			return remembered[i].name;
	return NULL;
}

static int runtime_name(const char *id, const struct container_roots *roots, char *buf, size_t sz)
{
	if (!roots)
		roots = &default_roots;
	if (roots->podman && !podman_name(roots->podman, id, buf, sz))
		return 0;
	if (roots->docker && !docker_name(roots->docker, id, buf, sz))
		return 0;
	return -ENOENT;
}

int container_name(const char *id, const struct container_roots *roots, char *buf, size_t sz)
{
	const char *kept;

	if (!runtime_name(id, roots, buf, sz))
		return 0;
	kept = remembered_name(id);
	return kept ? copy_name(kept, buf, sz) : -ENOENT;
}

static void keep_name(const char *id, const char *name)
{
	size_t slot = nr_remembered % REMEMBERED_NAMES;

	if (!*name || remembered_name(id) || strlen(id) >= sizeof(remembered[slot].id))
		return;
	snprintf(remembered[slot].id, sizeof(remembered[slot].id), "%s", id);
	snprintf(remembered[slot].name, sizeof(remembered[slot].name), "%s", name);
	nr_remembered++;
}

int container_names_remember_all(const struct container_roots *roots)
{
	char pattern[PATH_MAX];
	int n = 0;
	glob_t g;

	if (!roots)
		roots = &default_roots;
	if (!roots->podman)
		return 0;
	snprintf(pattern, sizeof(pattern), "%s/*-containers/containers.json", roots->podman);
	if (glob(pattern, 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		int ret = podman_name_in(g.gl_pathv[i], NULL, NULL, 0);

		n += ret > 0 ? ret : 0;
	}
	globfree(&g);
	return n;
}

int container_names_dirs(const struct container_roots *roots, char ***dirs, size_t *nr)
{
	char pattern[PATH_MAX];
	glob_t g;

	*dirs = NULL;
	*nr = 0;
	if (!roots)
		roots = &default_roots;
	if (!roots->podman)
		return 0;
	snprintf(pattern, sizeof(pattern), "%s/*-containers", roots->podman);
	if (glob(pattern, GLOB_ONLYDIR, NULL, &g))
		return 0;
	*dirs = calloc(g.gl_pathc, sizeof(**dirs));
	for (size_t i = 0; *dirs && i < g.gl_pathc; i++) {
		(*dirs)[i] = strdup(g.gl_pathv[i]);
		*nr += !!(*dirs)[i];
	}
	globfree(&g);
	return *dirs ? 0 : -ENOMEM;
}

int container_names_remember(const char *id, const struct container_roots *roots)
{
	size_t slot = nr_remembered % REMEMBERED_NAMES;
	int err;

	if (remembered_name(id))
		return 0;
	if (strlen(id) >= sizeof(remembered[slot].id))
		return -ENAMETOOLONG;
	err = runtime_name(id, roots, remembered[slot].name, sizeof(remembered[slot].name));
	if (err)
		return err;
	snprintf(remembered[slot].id, sizeof(remembered[slot].id), "%s", id);
	nr_remembered++;
	return 0;
}
