// SPDX-License-Identifier: GPL-2.0-only
/*
 * libc functions that keep their own return address, used the way programs
 * use them. The output is deterministic: the safety tests compare it, and
 * the exit status, with and without the profiler probing libc.
 * Usage: libc_workload sigsetjmp|context|vfork|dlsym|all
 */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
#include <sys/wait.h>

static int do_sigsetjmp(void)
{
	static sigjmp_buf env;
	static volatile int rounds;
	jmp_buf plain;
	volatile int again = 0;

	if (sigsetjmp(env, 1) < 3) {
		rounds++;
		siglongjmp(env, rounds);
	}
	if (setjmp(plain) == 0 && !again) {
		again = 1;
		longjmp(plain, 1);
	}
	if (_setjmp(plain) == 0)
		_longjmp(plain, 7);
	printf("sigsetjmp: %d rounds, longjmp back %d\n", rounds, again);
	return 0;
}

static ucontext_t main_ctx, co_ctx;
static int co_steps;

static void coroutine(void)
{
	for (int i = 0; i < 3; i++) {
		co_steps++;
		swapcontext(&co_ctx, &main_ctx);
	}
}

static int do_context(void)
{
	static char stack[64 * 1024];
	volatile int resumed = 0;
	ucontext_t here;

	if (getcontext(&co_ctx))
		return 1;
	co_ctx.uc_stack.ss_sp = stack;
	co_ctx.uc_stack.ss_size = sizeof(stack);
	co_ctx.uc_link = &main_ctx;
	makecontext(&co_ctx, coroutine, 0);
	for (int i = 0; i < 3; i++)
		swapcontext(&main_ctx, &co_ctx);
	getcontext(&here);
	if (!resumed) {
		resumed = 1;
		setcontext(&here);
	}
	printf("context: %d coroutine steps, resumed %d\n", co_steps, resumed);
	return 0;
}

/* One vfork+exec; in a function of its own so no caller variable lives across vfork. */
static int vfork_true(void)
{
	int status;
	pid_t pid = vfork();

	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

static int do_vfork(void)
{
	int ok = 0;

	for (int i = 0; i < 3; i++)
		ok += vfork_true();
	printf("vfork: %d of 3 children ran true\n", ok);
	return ok == 3 ? 0 : 1;
}

/* dlsym(RTLD_NEXT) finds "the next object" from its caller's return address. */
static int do_dlsym(void)
{
	int (*next_puts)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");

	if (!next_puts) {
		printf("dlsym: RTLD_NEXT failed: %s\n", dlerror());
		return 1;
	}
	next_puts("dlsym: RTLD_NEXT found puts");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *name; int (*run)(void); } modes[] = {
		{ "sigsetjmp", do_sigsetjmp }, { "context", do_context },
		{ "vfork", do_vfork }, { "dlsym", do_dlsym },
	};
	int rc = 0, found = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s sigsetjmp|context|vfork|dlsym|all\n", argv[0]);
		return 2;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(argv[1], "all") && strcmp(argv[1], modes[i].name))
			continue;
		found = 1;
		rc |= modes[i].run();
		fflush(stdout);
	}
	return found ? rc : 2;
}
