// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "cmd/cmd_list.h"
#include "cmd/live.h"
#include "elf/demangle.h"
#include "output/func_classes.h"
#include "probe/session.h"
#include "probe/target.h"
#include "util/array.h"
#include "util/messages.h"

/*
 * What a profile with these options would probe, read with the engine a
 * profile uses (prepare, and with root load, which calibrates), and
 * nothing attached to any target.
 */
struct list_cmd {
	struct profile_opts opts;
	struct session *session;
	struct class_row *rows;
	size_t nr_rows;
	char **owned;			/* names demangled here (functions left out) */
	size_t nr_owned;
	struct class_costs costs;
	char why_not[1200];
};

static int add_row(struct list_cmd *l, const struct class_row *r)
{
	struct class_row *slot = ARRAY_SLOT(l->rows, l->nr_rows);

	if (!slot)
		return -ENOMEM;
	*slot = *r;
	l->nr_rows++;
	return 0;
}

/* A function left out: its name demangled as the probed ones are (unless --no-demangle). */
static int add_left_out(struct list_cmd *l, const char *lib, const char *sym, enum unprobeable_why why)
{
	char *d = l->opts.no_demangle ? NULL : demangle(sym);
	char **slot;

	if (d) {
		slot = ARRAY_SLOT(l->owned, l->nr_owned);
		if (!slot) {
			free(d);
			return -ENOMEM;
		}
		*slot = d;
		l->nr_owned++;
	}
	return add_row(l, &(struct class_row){ .lib = lib, .func = d ? d : sym, .mangled = d ? sym : NULL,
					       .unprobeable = why });
}

static int fill_rows(struct list_cmd *l, const struct probe_table *t)
{
	int err = 0;

	for (size_t i = 0; i < t->nr_funcs && !err; i++) {
		const struct probe_func *f = &t->funcs[i];

		err = add_row(l, &(struct class_row){ .lib = t->libs[f->lib].file->display,
						      .func = f->demangled ? f->demangled : f->name,
						      .mangled = f->demangled ? f->name : NULL, .stepped = f->stepped,
						      .moved = f->moved, .entry_only = f->entry_only });
	}
	for (size_t i = 0; i < t->nr_libs && !err; i++) {
		const struct probe_lib *lib = &t->libs[i];

		for (size_t k = 0; k < lib->nr_unprobeable && !err; k++)
			err = add_left_out(l, lib->file->display, lib->unprobeable[k], UNPROBEABLE_NO_PLACE);
		for (size_t k = 0; k < lib->ifunc_unresolved && !err; k++)
			err = add_left_out(l, lib->file->display, lib->ifunc_unresolved_names[k], UNPROBEABLE_IFUNC);
	}
	return err;
}

/*
 * The costs as a profile's start measures them: load the session's BPF
 * programs, which calibrates (probe/calibrate.h). Without the privileges
 * for BPF, say so and list the classes all the same.
 */
static void measure_costs(struct list_cmd *l, int preflight_err, const char *preflight_msg)
{
	struct session_totals tot;
	char msg[1024];

	l->costs.why_not = l->why_not;
	if (preflight_err == -EPERM) {
		snprintf(l->why_not, sizeof(l->why_not), "that needs root (or CAP_BPF and CAP_PERFMON) to load the "
			 "programs a profile uses; sudo dlprof-bpf list measures them");
		return;
	}
	if (preflight_err) {
		snprintf(l->why_not, sizeof(l->why_not), "%s", preflight_msg);
		return;
	}
	if (session__load(l->session, NULL, msg, sizeof(msg))) {
		snprintf(l->why_not, sizeof(l->why_not), "%s", msg);
		return;
	}
	session__totals(l->session, &tot);
	if (tot.compensation_err) {
		snprintf(l->why_not, sizeof(l->why_not), "calibrating them failed (%s)", strerror(-tot.compensation_err));
		return;
	}
	l->costs.measured = true;
	l->costs.attach_mode = tot.attach_mode;
	memcpy(l->costs.pair_ns, tot.probe_pair_ns, sizeof(l->costs.pair_ns));
	memcpy(l->costs.pair_least_ns, tot.probe_pair_least_ns, sizeof(l->costs.pair_least_ns));
}

static int open_session(struct list_cmd *l, bool can_bpf)
{
	struct session_opts so = {
		/* Without BPF no mode can be probed, and the classes do not depend on it. */
		.attach_mode = can_bpf ? l->opts.attach_mode : 0,
		.unwind_unsafe = l->opts.unwind_unsafe,
		.pids = l->opts.pids,
		.nr_pids = l->opts.nr_pids,
	};
	bool no_pmu;

	cli_selection(&l->opts, &so.sel);
	return live_session_start(&so, &l->session, &no_pmu);
}

static int list_run(struct list_cmd *l, int argc, char **argv)
{
	char msg[1024];
	int err, preflight;

	err = cli_parse_cmd(CLI_LIST, argc, argv, &l->opts, msg, sizeof(msg));
	if (err) {
		errmsg("%s", msg);
		return EXIT_USAGE;
	}
	if (l->opts.help)
		return CMD_HELP;
	live_set_libbpf_print(l->opts.verbose);
	for (size_t i = 0; i < l->opts.nr_pids; i++) {
		if (target_pid_check(l->opts.pids[i])) {
			errmsg("process %d not found", (int)l->opts.pids[i]);
			return 1;
		}
	}
	preflight = session_preflight(msg, sizeof(msg));
	err = open_session(l, !preflight);
	if (err)
		return err;
	if (fill_rows(l, session__table(l->session))) {
		errmsg("out of memory");
		return 1;
	}
	class_rows_sort(l->rows, l->nr_rows);
	measure_costs(l, preflight, msg);
	if (l->opts.json)
		return class_list_print_json(stdout, l->rows, l->nr_rows, &l->costs) ? 1 : 0;
	class_list_print(stdout, l->rows, l->nr_rows, &l->costs);
	return 0;
}

int cmd_list(int argc, char **argv)
{
	struct list_cmd l = { 0 };
	int status = list_run(&l, argc, argv);

	session__free(l.session);
	for (size_t i = 0; i < l.nr_owned; i++)
		free(l.owned[i]);
	free(l.owned);
	free(l.rows);
	cli_opts_free(&l.opts);
	return status;
}
