/* SPDX-License-Identifier: GPL-2.0-only */
/* GNU IFUNC symbols: move each probe from the resolver to the implementation. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* dladdr1, dlinfo, pipe2 */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "elf/elf_symbols.h"
#include "util/file_io.h"
#include "util/clock.h"

/*
 * dlopen() runs the library's constructors, which may be slow (GPU
 * runtimes) or hang: long enough for the former, and one bad library
 * cannot stall the profiler for longer than this.
 */
#define HELPER_TIMEOUT_MS	30000

static bool ifunc_pending(const struct elf_func *f)
{
	return (f->flags & ELF_FUNC_IFUNC) && !(f->flags & ELF_FUNC_IFUNC_RESOLVED);
}

/* dlsym(), or dlvsym() for a versioned name ("memcpy@GLIBC_2.2.5", "f@@V2"). */
static void *symbol_address(void *handle, const char *name)
{
	const char *at = strchr(name, '@');
	char base[512];

	if (!at)
		return dlsym(handle, name);
	if ((size_t)(at - name) >= sizeof(base))
		return NULL;
	memcpy(base, name, (size_t)(at - name));
	base[at - name] = '\0';
	while (*at == '@')
		at++;
	return dlvsym(handle, base, at);
}

/* The implementation's vaddr in the library, 0 when name does not give one. */
static uint64_t child_lookup(void *handle, const struct link_map *lm,
			     const char *name, uint64_t resolver)
{
	struct link_map *owner = NULL;
	uint64_t vaddr;
	Dl_info info;
	void *addr;

	addr = symbol_address(handle, name);
	/* dlsym() also searches the dependencies: only this very file counts. */
	if (!addr || !dladdr1(addr, &info, (void **)&owner, RTLD_DL_LINKMAP) || owner != lm)
		return 0;
	vaddr = (uintptr_t)addr - lm->l_addr;
	/* A plain function name sharing the resolver's address gives the resolver back. */
	return vaddr == resolver ? 0 : vaddr;
}

static uint64_t child_resolve(void *handle, const struct link_map *lm, const struct elf_func *f)
{
	uint64_t vaddr;
	size_t i;

	/* Any name may be the exported IFUNC one; .symtab-only names fail dlsym(). */
	vaddr = child_lookup(handle, lm, f->name, f->vaddr);
	for (i = 0; !vaddr && f->aliases && f->aliases[i]; i++)
		vaddr = child_lookup(handle, lm, f->aliases[i], f->vaddr);
	return vaddr;
}

static void child_isolate(void)
{
	int sig, fd;

	/* The profiler's handlers (flush files, detach probes) must not run here. */
	for (sig = 1; sig < NSIG; sig++)
		signal(sig, SIG_DFL);
	/* What the library's constructors print must not land in our output. */
	fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

/* Writes one u64 per pending IFUNC, in list order: the implementation's vaddr or 0. */
static void __attribute__((noreturn)) child_run(const char *dlpath,
						const struct elf_func_list *list, int wfd)
{
	struct link_map *lm = NULL;
	void *handle;
	uint64_t vaddr;
	size_t i;

	child_isolate();
	handle = dlopen(dlpath, RTLD_LAZY | RTLD_LOCAL);
	if (!handle || dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm)
		_exit(1);
	for (i = 0; i < list->cnt; i++) {
		if (!ifunc_pending(&list->funcs[i]))
			continue;
		vaddr = child_resolve(handle, lm, &list->funcs[i]);
		if (write_full(wfd, &vaddr, sizeof(vaddr)))
			_exit(1);
	}
	/* _exit: neither the library's destructors nor our atexit handlers. */
	_exit(0);
}

static int read_all_timeout(int fd, void *buf, size_t len, int timeout_ms)
{
	int64_t deadline = (int64_t)(mono_ns() / 1000000) + timeout_ms, left;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char *p = buf;
	ssize_t n;
	int ret;

	while (len) {
		left = deadline - (int64_t)(mono_ns() / 1000000);
		if (left <= 0)
			return -ETIMEDOUT;
		ret = poll(&pfd, 1, (int)left);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0)
			return -errno;
		if (ret == 0)
			return -ETIMEDOUT;
		n = read(fd, p, len);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;	/* the helper died or gave up early */
		p += n;
		len -= n;
	}
	return 0;
}

/* True when the helper exited cleanly. */
static bool helper_reap(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno == EINTR)
			continue;
		/* SIGCHLD ignored: the kernel reaped it; the data read decides. */
		return errno == ECHILD;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Fill impl[] (one per pending IFUNC) from a forked helper, all zeros when
 * it fails in any way. Returns -errno only when no helper could be started.
 */
static int helper_run(const char *dlpath, const struct elf_func_list *list,
		      uint64_t *impl, size_t n)
{
	int pfd[2], err;
	bool ok;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(pfd[0]);
		close(pfd[1]);
		return err;
	}
	if (pid == 0) {
		close(pfd[0]);
		child_run(dlpath, list, pfd[1]);
	}
	close(pfd[1]);

	ok = read_all_timeout(pfd[0], impl, n * sizeof(*impl), HELPER_TIMEOUT_MS) == 0;
	close(pfd[0]);
	if (!ok)
		kill(pid, SIGKILL);
	ok = helper_reap(pid) && ok;
	if (!ok)
		memset(impl, 0, n * sizeof(*impl));
	return 0;
}

/* dlopen() searches the library path for a name without '/': not our file. */
static char *dlopen_path(const char *path)
{
	char *p;

	if (strchr(path, '/'))
		return strdup(path);
	if (asprintf(&p, "./%s", path) < 0)
		return NULL;
	return p;
}

/* Move resolved IFUNCs to their implementation, drop the others; returns how many were dropped. */
static size_t ifunc_apply(struct elf_func_list *list, const struct elf_segs *segs,
			  const uint64_t *impl)
{
	size_t i, j = 0, k = 0, lost = 0;
	struct elf_func *f;
	uint64_t offset;

	for (i = 0; i < list->cnt; i++) {
		f = &list->funcs[i];
		if (ifunc_pending(f)) {
			if (!impl[k] || elf_segs__offset(segs, impl[k], &offset)) {
				elf_func__clear(f);
				lost++;
				k++;
				continue;
			}
			f->vaddr = impl[k++];
			f->file_offset = offset;
			/* The resolver's size says nothing of the implementation's; its own symbol may. */
			f->size = 0;
			f->flags |= ELF_FUNC_IFUNC_RESOLVED;
		}
		list->funcs[j++] = *f;
	}
	list->cnt = j;
	return lost;
}

int ifunc_resolve(const char *path, struct elf_func_list *list, size_t *unresolved)
{
	struct elf_segs *segs = NULL;
	uint64_t *impl = NULL;
	char *dlpath = NULL;
	size_t i, n = 0, lost;
	int err;

	if (unresolved)
		*unresolved = 0;
	for (i = 0; i < list->cnt; i++)
		n += ifunc_pending(&list->funcs[i]);
	if (!n)
		return 0;

	err = elf_segs__load(path, &segs);
	if (err)
		goto cleanup;
	impl = calloc(n, sizeof(*impl));
	dlpath = dlopen_path(path);
	if (!impl || !dlpath) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = helper_run(dlpath, list, impl, n);
	if (err)
		goto cleanup;

	lost = ifunc_apply(list, segs, impl);
	if (unresolved)
		*unresolved = lost;
	err = elf_funcs__normalize(list);

cleanup:
	free(dlpath);
	free(impl);
	elf_segs__free(segs);
	return err;
}
