// SPDX-License-Identifier: GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "probe/target.h"
#include "util/array.h"

static void child_run(char **argv, pid_t parent, bool leave_running, int go_rd, int err_wr)
{
	sigset_t none;
	ssize_t n;
	char c;
	int e;

	/*
	 * Held, the command must never run unprofiled: it dies with the profiler.
	 * The parent may have died before the prctl took effect, hence getppid().
	 */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(127);
	/* The profiler blocks its signals for a signalfd; the command must not inherit that. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	do
		n = read(go_rd, &c, 1);
	while (n < 0 && errno == EINTR);
	close(go_rd);
	/* EOF without the go byte: the profiler gave up or died. */
	if (n != 1)
		_exit(127);
	/*
	 * The command ends with the profile, even when the profiler is killed
	 * (SIGKILL leaves it no time to stop the command); left running, it must
	 * survive the profiler. The death signal survives exec.
	 */
	if (prctl(PR_SET_PDEATHSIG, leave_running ? 0 : SIGTERM) || (!leave_running && getppid() != parent))
		_exit(127);
	execvp(argv[0], argv);
	e = errno;
	if (write(err_wr, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int launched_cmd__start(struct launched_cmd *cmd, char **argv, bool leave_running)
{
	pid_t parent = getpid(), pid;
	int go[2], errp[2];

	cmd->pid = -1;
	cmd->go_fd = cmd->err_fd = -1;
	/* A socket, not a pipe: a go byte sent to a child that died is EPIPE, never SIGPIPE. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go))
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
		child_run(argv, parent, leave_running, go[0], errp[1]);
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

	/* A child that died held (killed by someone) is reported when it is reaped. */
	while (send(cmd->go_fd, "g", 1, MSG_NOSIGNAL) < 0 && errno == EINTR)
		;
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

/* Reap the child once it has ended, waiting up to timeout_ms for that. */
static bool reap_within(struct launched_cmd *cmd, int pidfd, int timeout_ms, int *wstatus)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };

	/* Without a pidfd (-1), poll() just sleeps the whole timeout. */
	while (poll(&p, 1, timeout_ms) < 0 && errno == EINTR)
		;
	if (waitpid(cmd->pid, wstatus, WNOHANG) != cmd->pid)
		return false;
	cmd->pid = -1;
	return true;
}

/* How long a command may take to go once SIGKILLed before we give up on it. */
#define KILL_WAIT_MS 10000

void launched_cmd__stop(struct launched_cmd *cmd, int grace_ms, struct launched_cmd_end *end)
{
	/* An unreaped child keeps its pid: kill() and the pidfd reach this one. */
	int pidfd = (int)syscall(SYS_pidfd_open, cmd->pid, 0);

	memset(end, 0, sizeof(*end));
	if (!reap_within(cmd, pidfd, 0, &end->wstatus)) {
		end->signal_sent = SIGTERM;
		kill(cmd->pid, SIGTERM);
		if (!reap_within(cmd, pidfd, grace_ms, &end->wstatus)) {
			end->signal_sent = SIGKILL;
			kill(cmd->pid, SIGKILL);
			reap_within(cmd, pidfd, KILL_WAIT_MS, &end->wstatus);
		}
	}
	end->reaped = cmd->pid < 0;
	if (pidfd >= 0)
		close(pidfd);
}

void wait_status_describe(int wstatus, char *buf, size_t sz)
{
	const char *name;
	char sig[24];

	if (WIFEXITED(wstatus)) {
		snprintf(buf, sz, "exited with status %d", WEXITSTATUS(wstatus));
		return;
	}
	if (!WIFSIGNALED(wstatus)) {
		snprintf(buf, sz, "ended with wait status %#x", (unsigned int)wstatus);
		return;
	}
	name = sigabbrev_np(WTERMSIG(wstatus));
	if (name)
		snprintf(sig, sizeof(sig), "SIG%s", name);
	else
		snprintf(sig, sizeof(sig), "signal %d", WTERMSIG(wstatus));
	snprintf(buf, sz, "was killed by %s%s", sig, WCOREDUMP(wstatus) ? " (core dumped)" : "");
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

int target_command_path(const char *cmd, char *buf, size_t sz)
{
	const char *path = getenv("PATH");
	int err = -ENOENT;

	if (strchr(cmd, '/')) {
		if (snprintf(buf, sz, "%s", cmd) >= (int)sz)
			return -ENAMETOOLONG;
		return executable_file(cmd);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		int e;

		/* An empty entry is the current directory, as execvp(3) takes it. */
		if (snprintf(buf, sz, "%.*s%s%s", (int)len, len ? path : ".", "/", cmd) < (int)sz) {
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

int target_command_check(const char *cmd)
{
	char buf[4096];

	return target_command_path(cmd, buf, sizeof(buf));
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

void pid_watch__init(struct pid_watch *w)
{
	w->epoll_fd = -1;
	w->n = 0;
	for (size_t i = 0; i < TARGET_PIDS_MAX; i++)
		w->pidfds[i] = -1;
}

int pid_watch__add(struct pid_watch *w, pid_t pid, char *err, size_t err_sz)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)w->n };
	int fd, ret;

	if (w->n >= TARGET_PIDS_MAX) {
		snprintf(err, err_sz, "at most %d processes can be followed", TARGET_PIDS_MAX);
		return -E2BIG;
	}
	if (w->epoll_fd < 0 && (w->epoll_fd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		ret = -errno;
		snprintf(err, err_sz, "cannot watch the processes: %s", strerror(-ret));
		return ret;
	}
	fd = target_pid_watch(pid);
	if (fd < 0) {
		snprintf(err, err_sz, "process %d not found", (int)pid);
		return fd;
	}
	w->pidfds[w->n++] = fd;
	if (epoll_ctl(w->epoll_fd, EPOLL_CTL_ADD, fd, &ev)) {
		ret = -errno;
		snprintf(err, err_sz, "cannot watch process %d: %s", (int)pid, strerror(-ret));
		return ret;
	}
	return 0;
}

bool pid_watch__ended(const struct pid_watch *w, size_t i)
{
	struct pollfd p = { .fd = i < w->n ? w->pidfds[i] : -1, .events = POLLIN };

	return p.fd < 0 || poll(&p, 1, 0) == 1;
}

bool pid_watch__alive(struct pid_watch *w)
{
	bool alive = false;

	for (size_t i = 0; i < w->n; i++) {
		struct pollfd p = { .fd = w->pidfds[i], .events = POLLIN };

		if (p.fd < 0)
			continue;
		if (poll(&p, 1, 0) == 1) {
			/* Gone: out of the watch, so the epoll fd is not readable for it again. */
			epoll_ctl(w->epoll_fd, EPOLL_CTL_DEL, p.fd, NULL);
			close(p.fd);
			w->pidfds[i] = -1;
			continue;
		}
		alive = true;
	}
	return alive;
}

void pid_watch__close(struct pid_watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->pidfds[i] >= 0)
			close(w->pidfds[i]);
	if (w->epoll_fd >= 0)
		close(w->epoll_fd);
	pid_watch__init(w);
}

int exit_status_of(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 1;
}

struct proc_parent {
	pid_t pid, ppid;
	uint64_t start;		/* clock ticks after boot: tells it from a later holder of its pid */
};

/* Every process with its parent, from /proc/PID/stat (the comm may hold spaces and parentheses). */
static int proc_parents(struct proc_parent **out, size_t *cnt)
{
	struct proc_parent *all = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *proc = opendir("/proc");

	if (!proc)
		return -errno;
	while ((de = readdir(proc))) {
		char path[300], buf[512], *close_paren;
		unsigned long long start;
		int ppid, fd;
		ssize_t len;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* it exited meanwhile */
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		close_paren = strrchr(buf, ')');
		/* Fields 3 (state), 4 (ppid), then 22 (starttime). */
		if (!close_paren || sscanf(close_paren + 1, " %*c %d" "%*s %*s %*s %*s %*s %*s %*s %*s %*s"
					   "%*s %*s %*s %*s %*s %*s %*s %*s %llu", &ppid, &start) != 2)
			continue;
		if (ARRAY_RESERVE(all, cap, n + 1)) {
			free(all);
			closedir(proc);
			return -ENOMEM;
		}
		all[n++] = (struct proc_parent){ .pid = atoi(de->d_name), .ppid = ppid, .start = start };
	}
	closedir(proc);
	*out = all;
	*cnt = n;
	return 0;
}

int target_descendants(const pid_t *roots, size_t nr_roots, pid_t **out, uint64_t **starts, size_t *cnt)
{
	struct proc_parent *all = NULL;
	size_t n_all = 0, n = 0, cap = 0, cap_starts = 0;
	uint64_t *start = NULL;
	pid_t *found = NULL;
	bool grew = true;
	int err;

	*out = NULL;
	*starts = NULL;
	*cnt = 0;
	err = proc_parents(&all, &n_all);
	if (err)
		return err;
	/* Generation by generation: a process joins when its parent is a root or already found. */
	while (grew && !err) {
		grew = false;
		for (size_t i = 0; i < n_all && !err; i++) {
			bool parent_in = false, in = false;

			for (size_t r = 0; r < nr_roots; r++) {
				parent_in |= all[i].ppid == roots[r];
				in |= all[i].pid == roots[r];
			}
			for (size_t k = 0; k < n; k++) {
				parent_in |= all[i].ppid == found[k];
				in |= all[i].pid == found[k];
			}
			if (!parent_in || in)
				continue;
			err = ARRAY_RESERVE(found, cap, n + 1) ?: ARRAY_RESERVE(start, cap_starts, n + 1);
			if (!err) {
				start[n] = all[i].start;
				found[n++] = all[i].pid;
				grew = true;
			}
		}
	}
	free(all);
	if (err) {
		free(found);
		free(start);
		return err;
	}
	*out = found;
	*starts = start;
	*cnt = n;
	return 0;
}
