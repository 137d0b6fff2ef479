// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <unistd.h>

#include "util/file_io.h"

/* off < 0: write(2) at the file position; else pwrite(2) at off. */
static int write_loop(int fd, const void *buf, size_t len, int64_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t n = off < 0 ? write(fd, p, len) : pwrite(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
		if (off >= 0)
			off += n;
	}
	return 0;
}

int write_full(int fd, const void *buf, size_t len)
{
	return write_loop(fd, buf, len, -1);
}

int pwrite_full(int fd, const void *buf, size_t len, uint64_t off)
{
	return write_loop(fd, buf, len, (int64_t)off);
}

int pread_full(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;

	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return 0;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 1;
}
