// SPDX-License-Identifier: GPL-2.0-only
/*
 * Naming the kernel's groups against real BPF maps (root): a group whose
 * cgroup path the BPF side writes only after the group's entry, as it does
 * at a cgroup's first call, is named after its container, not the host's.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>

#include "attribution_maps.h"
#include "probe/kernel_groups.h"
#include "probe/probe_table.h"

#define CGROUP_ID 0x7fff0000beefull
#define CONTAINER_ID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

struct maps {
	struct kernel_maps km;
	int groups_fd, meta_fd;
};

static int maps_setup(void **state)
{
	struct maps *m = calloc(1, sizeof(*m));

	if (!m)
		return -1;
	m->groups_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "groups", sizeof(struct group_key), sizeof(struct group_stats),
				      16, NULL);
	m->meta_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cgroup_meta", sizeof(__u64), sizeof(struct cgroup_meta), 16,
				    NULL);
	if (m->groups_fd < 0 || m->meta_fd < 0) {
		fprintf(stderr, "skipped: BPF maps cannot be made here (%s): root with BPF is needed\n",
			strerror(errno));
		free(m);
		*state = NULL;
		return 0;
	}
	memset(&m->km, 0xff, sizeof(m->km));	/* every fd -1: only these two are read */
	m->km.groups_fd = m->groups_fd;
	m->km.cgroup_meta_fd = m->meta_fd;
	*state = m;
	return 0;
}

static int maps_teardown(void **state)
{
	struct maps *m = *state;

	if (m) {
		close(m->groups_fd);
		close(m->meta_fd);
		free(m);
	}
	return 0;
}

/* The container's cgroup path, leaf first, as note_cgroup writes it. */
static void container_meta(struct cgroup_meta *meta)
{
	memset(meta, 0, sizeof(*meta));
	snprintf(meta->names[0], sizeof(meta->names[0]), "libpod-%s", CONTAINER_ID);
	snprintf(meta->names[1], sizeof(meta->names[1]), "machine.slice");
	meta->levels = 2;
}

/* Between two lookups of the path: where the BPF side, preempted between the two, writes it. */
static void write_meta_now(void *arg)
{
	struct maps *m = arg;
	struct cgroup_meta meta;
	__u64 id = CGROUP_ID;

	container_meta(&meta);
	assert_int_equal(bpf_map_update_elem(m->meta_fd, &id, &meta, BPF_ANY), 0);
}

/* Counts each wait: the path never comes (a full map). */
static void count_wait(void *arg)
{
	(*(int *)arg)++;
}

/* The group's entry made, and with placeholder the empty path the BPF side writes before the names. */
static const struct func_profile *read_one(struct maps *m, bool placeholder, void (*wait)(void *), void *ctx)
{
	static struct lib_file file = { .path = "/lib/libdltest.so", .display = "/lib/libdltest.so" };
	static struct probe_lib lib = { .file = &file, .nr_funcs = 1 };
	static struct probe_func func = { .name = "dlt_add" };
	static const struct probe_table table = { .libs = &lib, .nr_libs = 1, .funcs = &func, .nr_funcs = 1 };
	struct kernel_groups *kg = kernel_groups__new(ATTR_BY_CONTAINER, NULL);
	struct group_key key = { .func_id = 0, .group = CGROUP_ID };
	struct group_stats *gs = calloc(1, sizeof(*gs));
	static struct func_profile row;
	const struct func_profile *rows;
	size_t n;

	assert_non_null(kg);
	assert_non_null(gs);
	gs->calls = 1009;
	/* The group's entry first, its cgroup's path not yet there. */
	assert_int_equal(bpf_map_update_elem(m->groups_fd, &key, gs, BPF_ANY), 0);
	if (placeholder) {
		struct cgroup_meta empty = { 0 };

		assert_int_equal(bpf_map_update_elem(m->meta_fd, &key.group, &empty, BPF_ANY), 0);
	}
	kernel_groups__meta_wait(kg, wait, ctx);
	assert_int_equal(kernel_groups__read(kg, &m->km, &table, &rows, &n), 0);
	assert_int_equal(n, 1);
	row = rows[0];
	row.group.container_id = row.group.container_id ? strdup(row.group.container_id) : NULL;
	kernel_groups__free(kg);
	free(gs);
	return &row;
}

/* A read that finds the path written between two lookups names the container; placeholder: over the empty one. */
static void named_after_container(void **state, bool placeholder)
{
	struct maps *m = *state;
	const struct func_profile *r;

	if (!m)
		skip();
	r = read_one(m, placeholder, write_meta_now, m);
	assert_int_equal(r->s.calls, 1009);
	assert_non_null(r->group.container_id);
	assert_string_equal(r->group.container_id, CONTAINER_ID);
	free((char *)r->group.container_id);
}

static void test_path_written_after_the_entry(void **state)
{
	named_after_container(state, false);
}

static void test_path_being_written(void **state)
{
	named_after_container(state, true);
}

static void test_path_never_written(void **state)
{
	struct maps *m = *state;
	const struct func_profile *r;
	int waits = 0;

	if (!m)
		skip();
	/* A full path map: the calls are still counted, with the host's, after a bounded wait. */
	r = read_one(m, false, count_wait, &waits);
	assert_int_equal(r->s.calls, 1009);
	assert_null(r->group.container_id);
	assert_true(waits > 0 && waits < 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_path_written_after_the_entry, maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(test_path_being_written, maps_setup, maps_teardown),
		cmocka_unit_test_setup_teardown(test_path_never_written, maps_setup, maps_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
