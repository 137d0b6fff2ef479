// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "probe/kernel_features.h"
#include "probe/preflight.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static int have_cap(const struct __user_cap_data_struct *data, int cap)
{
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int preflight_check(char *msg, size_t msg_sz)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };

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
	if (kernel_features_check(msg, msg_sz))
		return -ENOTSUP;
	/* Kernels >= 5.11 charge BPF memory to the cgroup; older ones need this, and sandboxes refuse it. */
	setrlimit(RLIMIT_MEMLOCK, &inf);
	return 0;
}
