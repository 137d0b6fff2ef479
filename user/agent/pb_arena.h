/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Memory for one protobuf message tree while it is built and packed:
 * protobuf-c's messages are plain structs pointing at each other, so the
 * exporters take them all from here and let them go at once.
 */
#ifndef DLPROF_AGENT_PB_ARENA_H
#define DLPROF_AGENT_PB_ARENA_H

#include <stdbool.h>
#include <stddef.h>

struct pb_arena {
	struct pb_chunk *chunks;
	bool failed;		/* an allocation failed: what was built is incomplete */
};

/* Zeroed, aligned for any type; NULL (and failed set) when out of memory. */
void *pb_alloc(struct pb_arena *a, size_t size);
char *pb_strdup(struct pb_arena *a, const char *s);
/* Everything taken from a, at once; a is empty and usable again. */
void pb_arena_clear(struct pb_arena *a);

#endif /* DLPROF_AGENT_PB_ARENA_H */
