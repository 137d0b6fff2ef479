// SPDX-License-Identifier: GPL-2.0-only
/* Writes the fuzzer's seed shards: sound files it can mutate from. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/shard_writer.h"

static int write_seed(const char *path, enum trace_compression comp, int late)
{
	struct shard_writer_opts o = { .compression = comp, .block_records = 8, .max_held = 64,
				       .reorder_window_ns = 1000 };
	struct shard_writer *w;
	struct call_record r;
	int err = 0;

	unlink(path);	/* the writer only creates: a rebuild replaces the old seed */
	w = shard_writer__new(AT_FDCWD, path, &o);

	if (!w)
		return 1;
	for (int i = 0; i < 20 && !err; i++) {
		memset(&r, 0, sizeof(r));
		r.type = REC_CALL;
		r.func_id = (__u32)(i % 3);
		r.pid = r.tid = 42;
		/* With late, every fourth record starts long before the others: late blocks. */
		r.ts_ns = late && i % 4 == 3 ? 10 + (__u64)i : 100000 + (__u64)i * 997;
		r.dur_ns = (__u64)i * 31;
		r.nr_counters = 1;
		r.counters[0] = (__u64)i;
		err = shard_writer__add(w, &r);
	}
	if (!err)
		err = shard_writer__close(w);
	shard_writer__free(w);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: make_seeds ZLIB.shard RAW.shard LATE.shard\n");
		return 2;
	}
	return write_seed(argv[1], TRACE_COMP_ZLIB, 0) | write_seed(argv[2], TRACE_COMP_NONE, 0) |
	       write_seed(argv[3], TRACE_COMP_ZLIB, 1);
}
