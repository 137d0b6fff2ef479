// SPDX-License-Identifier: GPL-2.0-only
/* The launched command's life, with real processes: held, released, stopped. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "probe/target.h"

/* A held child whose go channel closes without the go byte exits, never running the command. */
static void test_held_child_exits_on_eof(void **state)
{
	char dir[] = "/tmp/dlprof-target-XXXXXX", marker[64];
	struct launched_cmd cmd;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(marker, sizeof(marker), "%s/ran", dir);
	assert_int_equal(launched_cmd__start(&cmd, (char *[]){ "touch", marker, NULL }, false), 0);
	close(cmd.go_fd);
	assert_int_equal(waitpid(cmd.pid, &status, 0), cmd.pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 127);
	assert_int_equal(access(marker, F_OK), -1);
	close(cmd.err_fd);
	rmdir(dir);
}

static void start_released(struct launched_cmd *cmd, char **argv)
{
	assert_int_equal(launched_cmd__start(cmd, argv, false), 0);
	assert_int_equal(launched_cmd__release(cmd), 0);
}

static void test_stop_sigterm(void **state)
{
	struct launched_cmd cmd;
	struct launched_cmd_end end;
	char how[64];

	(void)state;
	start_released(&cmd, (char *[]){ "sleep", "30", NULL });
	launched_cmd__stop(&cmd, 10000 /* grace_ms */, &end);
	assert_int_equal(end.signal_sent, SIGTERM);
	assert_true(end.reaped);
	assert_int_equal(cmd.pid, -1);
	wait_status_describe(end.wstatus, how, sizeof(how));
	assert_string_equal(how, "was killed by SIGTERM");
}

static void test_stop_sigkill_after_grace(void **state)
{
	char dir[] = "/tmp/dlprof-target-XXXXXX", script[128];
	struct launched_cmd cmd;
	struct launched_cmd_end end;

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* The file says SIGTERM is ignored from now on. */
	snprintf(script, sizeof(script), "trap '' TERM; touch %s/ignoring; exec sleep 30", dir);
	start_released(&cmd, (char *[]){ "sh", "-c", script, NULL });
	snprintf(script, sizeof(script), "%s/ignoring", dir);
	while (access(script, F_OK))
		usleep(10000);
	launched_cmd__stop(&cmd, 200 /* grace_ms */, &end);
	unlink(script);
	rmdir(dir);
	assert_int_equal(end.signal_sent, SIGKILL);
	assert_true(end.reaped);
	assert_true(WIFSIGNALED(end.wstatus) && WTERMSIG(end.wstatus) == SIGKILL);
}

static void test_stop_after_own_exit(void **state)
{
	struct launched_cmd cmd;
	struct launched_cmd_end end;
	char how[64];
	siginfo_t si = { 0 };

	(void)state;
	start_released(&cmd, (char *[]){ "sh", "-c", "exit 3", NULL });
	/* Until it has ended, not reaping it. */
	assert_int_equal(waitid(P_PID, (id_t)cmd.pid, &si, WEXITED | WNOWAIT), 0);
	launched_cmd__stop(&cmd, 10000 /* grace_ms */, &end);
	assert_int_equal(end.signal_sent, 0);
	assert_true(end.reaped);
	assert_int_equal(exit_status_of(end.wstatus), 3);
	wait_status_describe(end.wstatus, how, sizeof(how));
	assert_string_equal(how, "exited with status 3");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_held_child_exits_on_eof),
		cmocka_unit_test(test_stop_sigterm),
		cmocka_unit_test(test_stop_sigkill_after_grace),
		cmocka_unit_test(test_stop_after_own_exit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
