// SPDX-License-Identifier: GPL-2.0-only
/*
 * probe_floor [--clock] [dlprof-bpf options] -- CMD [ARG...]
 *
 * Probes the functions dlprof-bpf would probe with the same options, at the
 * same places (--placement) and in the same attach mode (--attach), but
 * with empty programs, then runs CMD and passes its exit status through.
 * What CMD's calls cost then is the uprobe mechanism alone: dlprof-bpf
 * minus this is its BPF work, and no tool can go below it. --clock: each
 * program reads the clock once, what any latency measurement needs.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/attach.h"
#include "cmd/cli.h"
#include "util/messages.h"
#include "probe/probe_attach.h"
#include "probe/probe_table.h"
#include "probe_floor.skel.h"

static int run_command(char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		errmsg("cannot run %s: %s", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	struct profile_opts opts = {};
	struct probe_selection sel;
	struct probe_table table = {};
	struct probe_floor_bpf *skel = NULL;
	struct attacher *a = NULL;
	struct attach_progs progs;
	enum attach_mode mode;
	size_t skipped = 0;
	const char *failed = NULL;
	bool read_clock = argc > 1 && !strcmp(argv[1], "--clock");
	char msg[512];
	int err, rc = 1;

	if (read_clock) {
		argv[1] = argv[0];
		argv++;
		argc--;
	}
	err = cli_parse_cmd(CLI_LIVE, argc, argv, &opts, msg, sizeof(msg));
	if (err || !opts.command || !opts.libs.cnt) {
		errmsg("%s", err ? msg : "usage: probe_floor [--clock] --lib LIB [--func GLOB] [--attach MODE] "
					 "[--placement auto|entry] -- CMD [ARG...]");
		goto cleanup;
	}
	mode = opts.attach_mode == ATTACH_AUTO ? attach_detect_mode() : (enum attach_mode)opts.attach_mode;
	if (attach_mode_supported(mode)) {
		errmsg("this kernel cannot attach in %s mode", attach_mode_name(mode));
		goto cleanup;
	}
	skel = probe_floor_bpf__open();
	if (!skel) {
		errmsg("cannot open the BPF object: %s", strerror(errno));
		goto cleanup;
	}
	skel->rodata->read_clock = read_clock;
	progs = (struct attach_progs){ skel->progs.floor_entry, skel->progs.floor_return,
				       skel->progs.floor_session };
	err = attach_prepare_progs(&progs, mode);
	if (!err)
		err = probe_floor_bpf__load(skel);
	if (err) {
		errmsg("cannot load the BPF programs: %s", strerror(-err));
		goto cleanup;
	}
	cli_selection(&opts, &sel);
	err = probe_table__build(&table, &sel, 0, 0, msg, sizeof(msg));
	if (err) {
		errmsg("%s", msg);
		goto cleanup;
	}
	a = attacher__new(mode, &progs, 0);
	if (!a) {
		errmsg("cannot prepare the attach: %s", strerror(errno));
		goto cleanup;
	}
	err = probe_table__attach(&table, a, false, &skipped, &failed);
	if (err) {
		errmsg("cannot attach probes to %s: %s", failed ? failed : "the library", attach_strerror(err));
		goto cleanup;
	}
	fprintf(stderr, "probe_floor: %zu functions, %s mode\n", attacher__nr_attached(a), attach_mode_name(mode));
	rc = run_command(opts.command);
	if (rc < 0) {
		errmsg("cannot run %s: %s", opts.command[0], strerror(-rc));
		rc = 1;
	}
cleanup:
	attacher__free(a);
	probe_table__free(&table);
	probe_floor_bpf__destroy(skel);
	cli_opts_free(&opts);
	return rc;
}
