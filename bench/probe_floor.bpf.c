// SPDX-License-Identifier: GPL-2.0-only
/*
 * Empty entry, return and session programs: with them attached, a probed
 * call costs what the uprobe mechanism costs and nothing else. The floor
 * under any tool's BPF work (bench/probe_floor.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int floor_entry(void *ctx)
{
	return 0;
}

SEC("uprobe")
int floor_return(void *ctx)
{
	return 0;
}

/* 0 at the entry asks the kernel for the return half too. */
SEC("uprobe")
int floor_session(void *ctx)
{
	return 0;
}
