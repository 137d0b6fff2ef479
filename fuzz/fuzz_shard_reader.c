// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: any bytes as a shard file, read the way merge, report
 * and dump read it (index, every block, the merge over its runs). Built
 * with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, so CRCs do not stop the
 * fuzzer short of the decoding behind them.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "trace/shard_reader.h"
#include "trace/trace_merge.h"

/* A budget far below the default, so a hostile overlap shows as damage, not as RSS. */
#define FUZZ_MERGE_BUDGET (64u << 20)

static int file_of(const uint8_t *data, size_t size, char *path, size_t path_sz)
{
	int fd = memfd_create("shard", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, path_sz, "/proc/self/fd/%d", fd);
	return fd;
}

static void read_every_block(struct shard_reader *r)
{
	for (size_t i = 0; i < shard_reader__nr_blocks(r); i++) {
		const struct block_ref *b = shard_reader__block(r, i);
		struct call_record *out = malloc((size_t)b->h.nr_records * sizeof(*out));

		if (!out)
			abort();
		shard_reader__read_block(r, i, out);
		free(out);
	}
}

static void merge_all(struct shard_reader *r)
{
	struct trace_merge *m = trace_merge__new(FUZZ_MERGE_BUDGET);
	const struct call_record *rec;
	uint64_t last = 0;

	if (!m || trace_merge__add_source(m, r, "fuzz")) {
		trace_merge__free(m);
		return;
	}
	while (trace_merge__next(m, &rec) > 0) {
		/* The one promise the merge makes about its output. */
		if (rec->ts_ns < last)
			abort();
		last = rec->ts_ns;
	}
	trace_merge__free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct shard_reader *r;
	char path[64];
	int fd = file_of(data, size, path, sizeof(path));

	if (!shard_reader__open(&r, AT_FDCWD, path)) {
		read_every_block(r);
		shard_reader__free(r);
	}
	if (!shard_reader__open(&r, AT_FDCWD, path))
		merge_all(r);
	/* The same bytes as the block region of a .dlt (no shard header). */
	if (!shard_reader__open_region(&r, fd, 0, size)) {
		read_every_block(r);
		shard_reader__free(r);
	}
	close(fd);
	return 0;
}
