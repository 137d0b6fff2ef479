/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A file a command writes for the user (merge -o, the live summary -o):
 * written beside its name as NAME.tmp.XXXXXX, fsynced and renamed into
 * place, so NAME is whole or untouched. Only a regular file is ever
 * replaced, and never the command's own input: a device, FIFO, socket,
 * symlink or directory at NAME, or a NAME that is (or would land inside)
 * the input, is refused before anything is written.
 */
#ifndef DLPROF_OUTPUT_FILE_H
#define DLPROF_OUTPUT_FILE_H

#include <stddef.h>
#include <stdio.h>

struct output_file;

/*
 * Whether path may be written as an output of a command that reads input
 * (a file or directory; NULL: none). 0, or -EEXIST with one line in err
 * naming path and what to do.
 */
int output_file__check(const char *path, const char *input, char *err, size_t err_sz);
/*
 * Checks path as output_file__check does and creates the temporary file
 * beside it. 0, or -errno with one line in err.
 */
int output_file__open(struct output_file **out, const char *path, const char *input,
		      char *err, size_t err_sz);
/* The temporary file, for pwrite(); do not close it. */
int output_file__fd(const struct output_file *o);
/* A stdio stream on the temporary file (made on first use). NULL with errno set. */
FILE *output_file__stream(struct output_file *o);
/*
 * Flushes, fsyncs and renames the temporary file over path (checked once
 * more: only a regular file or nothing is replaced). 0 or -errno; on
 * failure the temporary file is removed by output_file__free.
 */
int output_file__commit(struct output_file *o);
/* Removes the temporary file unless committed. NULL-safe. */
void output_file__free(struct output_file *o);

#endif /* DLPROF_OUTPUT_FILE_H */
