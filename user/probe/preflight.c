// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <bpf/bpf.h>

#include "probe/kernel_features.h"
#include "probe/preflight.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/*
 * Whether bpf() itself is allowed: a seccomp profile (a container
 * runtime's default) or an LSM refuses it even to root, and every feature
 * probe would then read as missing from the kernel.
 */
static int bpf_syscall_allowed(char *msg, size_t msg_sz)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(int), sizeof(int), 1, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno != EPERM && errno != EACCES)
		return 0;
	snprintf(msg, msg_sz, "the bpf() system call is refused here (%s): a seccomp profile or security "
		 "module blocks it; allow bpf and perf_event_open (docs/packaging.md)", strerror(errno));
	return -errno;
}

static int have_cap(const struct __user_cap_data_struct *data, int cap)
{
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int preflight_check(char *msg, size_t msg_sz)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	int err;

	if (syscall(SYS_capget, &hdr, data)) {
		snprintf(msg, msg_sz, "cannot read this process's capabilities: %m");
		return -errno;
	}
	if (!have_cap(data, CAP_SYS_ADMIN) &&
	    !(have_cap(data, CAP_BPF) && have_cap(data, CAP_PERFMON))) {
		snprintf(msg, msg_sz, "needs root, or CAP_BPF and CAP_PERFMON: run it with sudo");
		return -EPERM;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(msg, msg_sz, "this kernel has no BTF (/sys/kernel/btf/vmlinux): "
			 "use a kernel >= 5.15 built with CONFIG_DEBUG_INFO_BTF=y");
		return -ENOTSUP;
	}
	err = bpf_syscall_allowed(msg, msg_sz);
	if (err)
		return err;
	if (kernel_features_check(msg, msg_sz))
		return -ENOTSUP;
	/* Kernels >= 5.11 charge BPF memory to the cgroup; older ones need this, and sandboxes refuse it. */
	setrlimit(RLIMIT_MEMLOCK, &inf);
	return 0;
}
