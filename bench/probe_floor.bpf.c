// SPDX-License-Identifier: GPL-2.0-only
/*
 * Empty entry, return and session programs: with them attached, a probed
 * call costs what the uprobe mechanism costs and nothing else. The floor
 * under any tool's BPF work (bench/probe_floor.c). With read_clock, each
 * program reads the clock once and nothing more: the floor of any tool
 * that measures latency (one read at entry, one at return).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

/* Rodata: 0 leaves the programs empty (the verifier prunes the read). */
const volatile __u32 read_clock = 0;

/* Where the reads go, so the compiler keeps them. */
__u64 clock_sink = 0;

static __always_inline void maybe_read_clock(void)
{
	if (read_clock)
		clock_sink = bpf_ktime_get_ns();
}

SEC("uprobe")
int floor_entry(void *ctx)
{
	maybe_read_clock();
	return 0;
}

SEC("uprobe")
int floor_return(void *ctx)
{
	maybe_read_clock();
	return 0;
}

/* 0 at the entry asks the kernel for the return half too. */
SEC("uprobe")
int floor_session(void *ctx)
{
	maybe_read_clock();
	return 0;
}
