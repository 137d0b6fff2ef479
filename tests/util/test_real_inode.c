// SPDX-License-Identifier: GPL-2.0-only
/* real_inode: the /proc/PID/root path forms, and a plain file's own inode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <cmocka.h>

#include "util/real_inode.h"

static void test_proc_root_split(void **state)
{
	size_t len = 0;

	(void)state;
	assert_int_equal(proc_root_split("/proc/42/root/usr/lib/libz.so.1", &len), 42);
	assert_int_equal(len, strlen("/proc/42/root"));
	assert_int_equal(proc_root_split("/proc/7/root", &len), 7);
	assert_int_equal(len, strlen("/proc/7/root"));
	/* Not a process's root: its cwd, a name that only starts alike, self, no pid. */
	assert_int_equal(proc_root_split("/proc/42/cwd/libz.so.1", &len), 0);
	assert_int_equal(proc_root_split("/proc/42/rootfs/libz.so.1", &len), 0);
	assert_int_equal(proc_root_split("/proc/self/root/lib", &len), 0);
	assert_int_equal(proc_root_split("/proc//root/lib", &len), 0);
	assert_int_equal(proc_root_split("/usr/lib/libz.so.1", &len), 0);
}

static void test_plain_file_is_its_own_inode(void **state)
{
	char path[] = "/tmp/dlprof-real-inode-XXXXXX";
	struct statfs sfs;
	struct stat st;
	dev_t dev;
	ino_t ino;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(real_inode_of(path, &dev, &ino), 0);
	unlink(path);
	/* Not an overlay: what stat() says is what a uprobe takes (an overlay's is the namespace tests' job). */
	if (statfs("/tmp", &sfs) == 0 && sfs.f_type == OVERLAYFS_SUPER_MAGIC)
		skip();
	assert_true(dev == st.st_dev);
	assert_true(ino == st.st_ino);
	assert_int_equal(real_inode_of("/nonexistent/dlprof", &dev, &ino), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_root_split),
		cmocka_unit_test(test_plain_file_is_its_own_inode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
