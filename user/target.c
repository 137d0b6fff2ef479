// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "target.h"

static void child_run(char **argv, int go_rd, int err_wr)
{
	sigset_t none;
	char c;
	int e;

	/* The profiler blocks its signals for a signalfd; the command must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	while (read(go_rd, &c, 1) < 0 && errno == EINTR)
		;
	close(go_rd);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int launched_cmd__start(struct launched_cmd *cmd, char **argv)
{
	int go[2], errp[2];
	pid_t pid;

	cmd->pid = -1;
	cmd->go_fd = cmd->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(errp, O_CLOEXEC)) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		return e;
	}
	pid = fork();
	if (pid < 0) {
		int e = -errno;

		close(go[0]); close(go[1]); close(errp[0]); close(errp[1]);
		return e;
	}
	if (pid == 0) {
		close(go[1]);
		close(errp[0]);
		child_run(argv, go[0], errp[1]);
	}
	close(go[0]);
	close(errp[1]);
	cmd->pid = pid;
	cmd->go_fd = go[1];
	cmd->err_fd = errp[0];
	return 0;
}

int launched_cmd__release(struct launched_cmd *cmd)
{
	ssize_t n;
	int e = 0;

	close(cmd->go_fd);
	cmd->go_fd = -1;
	do
		n = read(cmd->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(cmd->err_fd);
	cmd->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(cmd->pid, NULL, 0);
		cmd->pid = -1;
		return -e;
	}
	return 0;
}

void launched_cmd__abort(struct launched_cmd *cmd)
{
	if (cmd->pid > 0) {
		kill(cmd->pid, SIGKILL);
		waitpid(cmd->pid, NULL, 0);
		cmd->pid = -1;
	}
	if (cmd->go_fd >= 0)
		close(cmd->go_fd);
	if (cmd->err_fd >= 0)
		close(cmd->err_fd);
	cmd->go_fd = cmd->err_fd = -1;
}

static int executable_file(const char *path)
{
	struct stat st;

	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EACCES;
	return access(path, X_OK) ? -errno : 0;
}

int target_command_check(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[4096];
	int err = -ENOENT;

	if (strchr(cmd, '/'))
		return executable_file(cmd);
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int e;

		/* An empty entry is the current directory, as execvp(3) takes it. */
		if (snprintf(buf, sizeof(buf), "%.*s%s%s", (int)len, len ? path : ".", "/", cmd) <
		    (int)sizeof(buf)) {
			e = executable_file(buf);
			if (!e)
				return 0;
			if (e == -EACCES)
				err = e;
		}
		path += len;
		if (*path == ':')
			path++;
	}
	return err;
}

int target_pid_check(pid_t pid)
{
	if (kill(pid, 0) && errno == ESRCH)
		return -ESRCH;
	return 0;
}

int target_pid_watch(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

int exit_status_of(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}
