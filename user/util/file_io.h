/* SPDX-License-Identifier: GPL-2.0-only */
/* Whole reads and writes: the kernel may move fewer bytes than asked, or be interrupted. */
#ifndef DLPROF_FILE_IO_H
#define DLPROF_FILE_IO_H

#include <stddef.h>
#include <stdint.h>

/* All of buf to fd: 0, or -errno (-EIO when nothing moves). */
int write_full(int fd, const void *buf, size_t len);
/* All of buf to fd at off: 0, or -errno (-EIO when nothing moves). */
int pwrite_full(int fd, const void *buf, size_t len, uint64_t off);
/* len bytes from fd at off: 1 when all were read, 0 when the file ended first, -errno. */
int pread_full(int fd, void *buf, size_t len, uint64_t off);

#endif /* DLPROF_FILE_IO_H */
