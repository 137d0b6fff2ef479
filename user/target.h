/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes a profile follows: a launched command or a running pid. */
#ifndef DLPROF_TARGET_H
#define DLPROF_TARGET_H

#include <stdbool.h>
#include <sys/types.h>

struct launched_cmd {
	pid_t pid;
	int go_fd;	/* write end: the child execs once it is closed */
	int err_fd;	/* read end: carries the child's exec errno, EOF on success */
};

/*
 * Fork a child that waits before exec, so probes can be attached before its
 * first instruction. sigmask is restored in the child. Returns 0 or -errno.
 */
int launched_cmd__start(struct launched_cmd *cmd, char **argv);
/* Let the child exec. Returns 0, or -errno when exec failed (-ENOENT: command not found). */
int launched_cmd__release(struct launched_cmd *cmd);
/* Kill and reap a child that will never be released. */
void launched_cmd__abort(struct launched_cmd *cmd);

/* 0 when cmd names an executable file (directly or in $PATH), else -ENOENT or -EACCES. */
int target_command_check(const char *cmd);

/* 0 when pid names a live process, -ESRCH otherwise. */
int target_pid_check(pid_t pid);
/* A pollable fd that turns readable when pid exits (pidfd), or -errno. */
int target_pid_watch(pid_t pid);

/* The tool's exit status for a child's wait status: its code, or 128+signal. */
int exit_status_of(int wstatus);

#endif /* DLPROF_TARGET_H */
