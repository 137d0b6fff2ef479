/* SPDX-License-Identifier: GPL-2.0-only */
/* The processes a profile follows: a launched command or a running pid. */
#ifndef DLPROF_TARGET_H
#define DLPROF_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct launched_cmd {
	pid_t pid;
	int go_fd;	/* one byte lets the child exec; EOF without it makes it exit */
	int err_fd;	/* read end: carries the child's exec errno, EOF on success */
};

/*
 * Fork a child that waits before exec, so probes can be attached before its
 * first instruction. sigmask is restored in the child. A held child dies
 * with the profiler and never execs without launched_cmd__release(). Once
 * running, the kernel sends it SIGTERM should the profiler die, unless
 * leave_running. Returns 0 or -errno.
 */
int launched_cmd__start(struct launched_cmd *cmd, char **argv, bool leave_running);
/* Let the child exec. Returns 0, or -errno when exec failed (-ENOENT: command not found). */
int launched_cmd__release(struct launched_cmd *cmd);
/* Kill and reap a child that will never be released. */
void launched_cmd__abort(struct launched_cmd *cmd);

/* How launched_cmd__stop() found the command. */
struct launched_cmd_end {
	int signal_sent;	/* 0: it had ended already; SIGTERM, or SIGKILL after the grace period */
	bool reaped;		/* false: still there after SIGKILL (stuck in the kernel) */
	int wstatus;		/* when reaped */
};

/*
 * Stop the running command as timeout(1) does: SIGTERM, SIGKILL when it is
 * still there after grace_ms, and reap it. Its children get no signal from
 * us: the command passes it on or not.
 */
void launched_cmd__stop(struct launched_cmd *cmd, int grace_ms, struct launched_cmd_end *end);

/* "exited with status N", "was killed by SIGTERM": what a wait status says. */
void wait_status_describe(int wstatus, char *buf, size_t sz);

/* 0 when cmd names an executable file (directly or in $PATH), else -ENOENT or -EACCES. */
int target_command_check(const char *cmd);
/* target_command_check, and the file execvp(3) would run in buf. */
int target_command_path(const char *cmd, char *buf, size_t sz);

/* 0 when pid names a live process, -ESRCH otherwise. */
int target_pid_check(pid_t pid);
/* A pollable fd that turns readable when pid exits (pidfd), or -errno. */
int target_pid_watch(pid_t pid);

/* -p takes at most this many processes. */
#define TARGET_PIDS_MAX 64

/* The -p processes watched for their exit: one epoll fd over their pidfds. */
struct pid_watch {
	int epoll_fd;			/* readable when one exits; -1: none watched */
	int pidfds[TARGET_PIDS_MAX];	/* -1: gone */
	size_t n;
};

void pid_watch__init(struct pid_watch *w);
/* Watch pid too (at most TARGET_PIDS_MAX): 0, or -errno with the one line in err. */
int pid_watch__add(struct pid_watch *w, pid_t pid, char *err, size_t err_sz);
/* Whether the i-th process added has exited (a watch can tell it from a later holder of its pid). */
bool pid_watch__ended(const struct pid_watch *w, size_t i);
/* Forgets the processes that exited: false once none is left. */
bool pid_watch__alive(struct pid_watch *w);
void pid_watch__close(struct pid_watch *w);

/*
 * The processes descending from roots now (children, their children, ...),
 * from the parent pids in /proc/PID/stat; roots themselves not included.
 * (*starts)[i] is (*out)[i]'s start time as proc_start_time() reads it.
 * *out and *starts are malloc'ed. 0 or -errno.
 */
int target_descendants(const pid_t *roots, size_t nr_roots, pid_t **out, uint64_t **starts, size_t *cnt);

/* The tool's exit status for a child's wait status: its code, or 128+signal. */
int exit_status_of(int wstatus);

#endif /* DLPROF_TARGET_H */
