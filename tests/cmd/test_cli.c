// SPDX-License-Identifier: GPL-2.0-only
/* Option parsing and function selection. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/attach.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "probe/probe_table.h"

#define ARGV(...) ((char *[]){ "dlprof-bpf", __VA_ARGS__, NULL })

static int parse(char **argv, struct profile_opts *o, char *err)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cli_parse_cmd(CLI_LIVE, argc, argv, o, err, 256);
}

static void test_full_command(void **state)
{
	char *argv[] = { "dlprof-bpf", "--lib", "libz.so.1", "-l", "./libfoo.so,libbar.so*",
			 "--func", "foo_*", "-x", "foo_debug*", "-d", "10", "-i", "0.5",
			 "--attach", "classic", "--", "gzip", "-k", "big.txt", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), 0);
	assert_int_equal(o.libs.cnt, 3);
	assert_string_equal(o.libs.items[1], "./libfoo.so");
	assert_string_equal(o.libs.items[2], "libbar.so*");
	assert_int_equal(o.funcs.cnt, 1);
	assert_int_equal(o.excludes.cnt, 1);
	assert_true(o.duration_s == 10.0);
	assert_true(o.interval_s == 0.5);
	assert_int_equal(o.attach_mode, ATTACH_CLASSIC);
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "gzip");
	assert_string_equal(o.command[1], "-k");
	cli_opts_free(&o);
}

/* A demangled C++ name as the table prints it is one glob: its commas inside <> or () do not split. */
static void test_func_names_with_commas(void **state)
{
	char *argv[] = { "dlprof-bpf", "--lib", "libstdc++.so.6", "--func",
			 "std::basic_string<char, std::char_traits<char>, std::allocator<char> >::append(char const*, "
			 "unsigned long),a\\,b,f[ab,]*", "-x", "g(int, int),operator->", "-x", ",", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), -EINVAL);
	assert_non_null(strstr(err, "--exclude: empty name in ','"));
	cli_opts_free(&o);
	argv[7] = NULL;
	assert_int_equal(parse(argv, &o, err), 0);
	assert_int_equal(o.funcs.cnt, 3);
	assert_string_equal(o.funcs.items[0], "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"
					      "::append(char const*, unsigned long)");
	assert_string_equal(o.funcs.items[1], "a,b");
	assert_string_equal(o.funcs.items[2], "f[ab,]*");
	assert_int_equal(o.excludes.cnt, 2);
	assert_string_equal(o.excludes.items[0], "g(int, int)");
	assert_string_equal(o.excludes.items[1], "operator->");
	cli_opts_free(&o);
}

static void test_command_options_not_ours(void **state)
{
	/* "-p" after the command name belongs to the command. */
	char *argv[] = { "dlprof-bpf", "-l", "libc.so.6", "ls", "-p", "/", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), 0);
	assert_int_equal(o.nr_pids, 0);
	assert_string_equal(o.command[0], "ls");
	assert_string_equal(o.command[1], "-p");
	cli_opts_free(&o);
}

static void expect_error(char **argv, const char *needle)
{
	struct profile_opts o;
	char err[256] = "";

	assert_int_equal(parse(argv, &o, err), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("'%s' not in '%s'", needle, err);
	assert_null(strchr(err, '\n'));
	cli_opts_free(&o);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error(ARGV("-p", "123"), "no library");
	expect_error(ARGV("-l", "x", "-p", "abc"), "not a process id");
	expect_error(ARGV("-l", "x", "-p", "0"), "not a process id");
	expect_error(ARGV("-l", "x", "-d", "-3"), "positive number of seconds");
	expect_error(ARGV("-l", "x", "-d", "3s"), "positive number of seconds");
	expect_error(ARGV("-l", "x", "--attach", "fast"), "not one of");
	expect_error(ARGV("-l", "x", "--frobnicate"), "unknown option");
	expect_error(ARGV("-l"), "needs an argument");
	expect_error(ARGV("-l", "x", "-p", "12", "--", "true"), "exclude each other");
	expect_error(ARGV("-l", "a,,b"), "empty name");
	expect_error(ARGV("-l", "x", "--leave-running", "-d", "1"), "applies to a launched command");
	expect_error(ARGV("-l", "x", "--kill-after", "2", "-p", "12"), "applies to a launched command");
	expect_error(ARGV("-l", "x", "--kill-after", "0", "--", "true"), "positive number of seconds");
	expect_error(ARGV("-l", "x", "--kill-after", "2", "--leave-running", "--", "true"), "exclude each other");
}

static void test_command_end_options(void **state)
{
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(ARGV("-l", "x", "--", "true"), &o, err), 0);
	assert_true(o.kill_after_s == KILL_AFTER_S_DEFAULT);
	assert_false(o.leave_running);
	cli_opts_free(&o);
	assert_int_equal(parse(ARGV("-l", "x", "--kill-after", "0.5", "--", "true"), &o, err), 0);
	assert_true(o.kill_after_s == 0.5);
	cli_opts_free(&o);
	assert_int_equal(parse(ARGV("-l", "x", "--leave-running", "--", "true"), &o, err), 0);
	assert_true(o.leave_running);
	cli_opts_free(&o);
}

static void test_help_without_lib(void **state)
{
	char *argv[] = { "dlprof-bpf", "--help", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), 0);
	assert_true(o.help);
	cli_opts_free(&o);
}

/* What commands_main prints on stdout for argv, into out; returns its exit status. */
static int run_main(char **argv, char *out, size_t out_sz)
{
	FILE *f = tmpfile();
	int saved = dup(STDOUT_FILENO), argc = 0, status;
	size_t n;

	assert_non_null(f);
	while (argv[argc])
		argc++;
	fflush(stdout);
	assert_int_equal(dup2(fileno(f), STDOUT_FILENO), STDOUT_FILENO);
	status = commands_main(argc, argv);
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	rewind(f);
	n = fread(out, 1, out_sz - 1, f);
	out[n] = '\0';
	fclose(f);
	return status;
}

/* Each command hands --help back to the command table, which prints that command's help. */
static void test_commands_answer_help(void **state)
{
	static const char *const names[] = { "live", "record", "top", "merge", "report", "dump", "export",
					     "list", "agent" };
	char out[16384], usage[64];

	(void)state;
	assert_int_equal(run_main(ARGV("--help"), out, sizeof(out)), 0);
	assert_non_null(strstr(out, "Usage: dlprof-bpf [live]"));
	assert_non_null(strstr(out, "Commands:"));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		assert_int_equal(run_main(ARGV((char *)names[i], "--help"), out, sizeof(out)), 0);
		snprintf(usage, sizeof(usage), "Usage: dlprof-bpf %s", strcmp(names[i], "live") ? names[i] : "[live]");
		assert_non_null(strstr(out, usage));
		assert_non_null(strstr(out, "\nOptions:\n"));
	}
	assert_int_equal(run_main(ARGV("reprot"), out, sizeof(out)), EXIT_USAGE);
	assert_string_equal(out, "");
}

static void test_record_options(void **state)
{
	char *live[] = { "dlprof-bpf", "-l", "x", "-o", "t.d", NULL };
	char *rec[] = { "record", "-l", "x", "-o", "t.d", "--ringbuf-size", "4M", "--compress", "none", NULL };
	char *bad_size[] = { "record", "-l", "x", "-o", "t.d", "--ringbuf-size", "3M", NULL };
	char *no_out[] = { "record", "-l", "x", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	/* -o is the summary file of the live mode, the trace directory of record. */
	assert_int_equal(cli_parse_cmd(CLI_LIVE, 5, live, &o, err, sizeof(err)), 0);
	assert_string_equal(o.output, "t.d");
	cli_opts_free(&o);
	live[3] = "--ringbuf-size";
	live[4] = "4M";
	assert_int_equal(cli_parse_cmd(CLI_LIVE, 5, live, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "belongs to 'dlprof-bpf record'"));
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_RECORD, 9, rec, &o, err, sizeof(err)), 0);
	assert_string_equal(o.output, "t.d");
	assert_int_equal(o.ringbuf_bytes, 4u << 20);
	assert_true(o.no_compress);
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_RECORD, 7, bad_size, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "power of two"));
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_RECORD, 3, no_out, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "needs -o"));
	cli_opts_free(&o);
}

static int parse_cmd(enum cli_cmd cmd, char **argv, struct profile_opts *o, char *err)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cli_parse_cmd(cmd, argc, argv, o, err, 256);
}

/* Each command takes the formats meant for it: export the trace formats, report and dump theirs. */
static void test_export_formats(void **state)
{
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse_cmd(CLI_EXPORT, ARGV("t.d"), &o, err), 0);
	assert_string_equal(o.format, "perfetto");
	assert_null(o.output);
	assert_int_equal(parse_cmd(CLI_EXPORT, ARGV("t.d", "--format", "folded", "--weight", "oncpu", "-o", "f"),
				   &o, err), 0);
	assert_string_equal(o.weight, "oncpu");
	assert_string_equal(o.output, "f");
	assert_int_equal(parse_cmd(CLI_EXPORT, ARGV("t.d", "--format", "csv"), &o, err), -EINVAL);
	assert_non_null(strstr(err, "does not apply to export"));
	assert_int_equal(parse_cmd(CLI_EXPORT, ARGV("t.d", "--weight", "wall"), &o, err), -EINVAL);
	assert_non_null(strstr(err, "--weight applies to --format folded"));
	assert_int_equal(parse_cmd(CLI_REPORT, ARGV("t.d", "--format", "perfetto"), &o, err), -EINVAL);
	assert_non_null(strstr(err, "export writes it"));
	assert_int_equal(parse_cmd(CLI_DUMP, ARGV("t.d", "--format", "folded"), &o, err), -EINVAL);
	assert_int_equal(parse_cmd(CLI_DUMP, ARGV("t.d", "--weight", "wall"), &o, err), -EINVAL);
	assert_non_null(strstr(err, "belongs to"));
	assert_int_equal(parse(ARGV("-l", "x", "--format", "folded"), &o, err), -EINVAL);
	cli_opts_free(&o);
}

static void test_selection(void **state)
{
	char *argv[] = { "dlprof-bpf", "-l", "x", "-f", "foo_*,bar", "-x", "foo_debug*", NULL };
	char *no_aliases[] = { NULL };
	char *aliases[] = { "foo_alias", NULL };
	struct probe_selection sel;
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), 0);
	cli_selection(&o, &sel);
	assert_true(probe_table_selects(&sel, "foo_x", no_aliases));
	assert_true(probe_table_selects(&sel, "bar", no_aliases));
	assert_false(probe_table_selects(&sel, "barx", no_aliases));
	assert_false(probe_table_selects(&sel, "foo_debug_dump", no_aliases));
	/* An alias that matches selects the function. */
	assert_true(probe_table_selects(&sel, "zzz", aliases));
	cli_opts_free(&o);
}

/* Globs match the symbol, its demangled form, and the aliases' (--no-demangle: symbols only). */
static void test_selection_demangled(void **state)
{
	char *argv[] = { "dlprof-bpf", "-l", "x", "-f", "std::*,_ZN3dlx*", "-x", "*::_M_*", NULL };
	char *argv_plain[] = { "dlprof-bpf", "--no-demangle", "-l", "x", "-f", "std::*", NULL };
	char *no_aliases[] = { NULL };
	char *cxx_alias[] = { "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc", NULL };
	struct probe_selection sel;
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse(argv, &o, err), 0);
	cli_selection(&o, &sel);
	assert_false(sel.no_demangle);
	/* std::__cxx11::basic_string<...>::append(char const*) */
	assert_true(probe_table_selects(&sel, "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
					no_aliases));
	assert_true(probe_table_selects(&sel, "_ZN3dlx5raiseEi", no_aliases));	/* the mangled form */
	assert_true(probe_table_selects(&sel, "c_alias_name", cxx_alias));	/* an alias's demangled form */
	assert_false(probe_table_selects(&sel, "deflate", no_aliases));
	/* The exclude sees std::__cxx11::basic_string<...>::_M_append(char const*, unsigned long). */
	assert_false(probe_table_selects(&sel, "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm",
					 no_aliases));
	cli_opts_free(&o);

	assert_int_equal(parse(argv_plain, &o, err), 0);
	cli_selection(&o, &sel);
	assert_true(sel.no_demangle);
	assert_false(probe_table_selects(&sel, "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKc",
					 no_aliases));
	cli_opts_free(&o);
}

/* top takes the live mode's selection, not its outputs; --html is a format and a file. */
static void test_top_and_html(void **state)
{
	char *top[] = { "top", "--lib", "libz.so.1", "--func", "deflate*", "-p", "12", "--no-demangle", NULL };
	char *top_out[] = { "top", "--lib", "libz.so.1", "-o", "x", NULL };
	char *live_html[] = { "dlprof-bpf", "--lib", "libz.so.1", "--html", "page.html", NULL };
	char *live_lines[] = { "dlprof-bpf", "--lib", "libz.so.1", "-i", "1", "--json", NULL };
	char *report_html[] = { "report", "trace.d", "--html", "r.html", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(cli_parse_cmd(CLI_TOP, 8, top, &o, err, sizeof(err)), 0);
	assert_int_equal(o.nr_pids, 1);
	assert_true(o.no_demangle);
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_TOP, 5, top_out, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--output"));
	cli_opts_free(&o);
	assert_int_equal(parse(live_html, &o, err), 0);
	assert_string_equal(o.format, "html");
	assert_string_equal(o.output, "page.html");
	cli_opts_free(&o);
	assert_int_equal(parse(live_lines, &o, err), 0);
	assert_true(o.json && o.interval_s == 1.0);
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_REPORT, 4, report_html, &o, err, sizeof(err)), 0);
	assert_string_equal(o.format, "html");
	assert_string_equal(o.input, "trace.d");
	cli_opts_free(&o);
	expect_error(ARGV("-l", "x", "-i", "1", "--html", "p.html"), "--html writes one page");
	expect_error(ARGV("-l", "x", "--html", "p.html", "--json"), "exclude each other");
}

/* list takes the selection and --json, nothing that runs or writes a profile; names come from the command table. */
static void test_list_options(void **state)
{
	char *ok[] = { "list", "--lib", "libz.so.1", "--func", "deflate*", "-x", "deflateEnd", "-p", "12",
		       "--placement", "entry", "--unwind", "unsafe", "--no-demangle", "--json", NULL };
	char *no_lib[] = { "list", "--func", "x", NULL };
	char *command[] = { "list", "--lib", "libz.so.1", "--", "true", NULL };
	char *duration[] = { "list", "--lib", "libz.so.1", "-d", "1", NULL };
	struct profile_opts o;
	char err[256];

	(void)state;
	assert_int_equal(cli_parse_cmd(CLI_LIST, 15, ok, &o, err, sizeof(err)), 0);
	assert_int_equal(o.libs.cnt, 1);
	assert_int_equal(o.funcs.cnt, 1);
	assert_int_equal(o.excludes.cnt, 1);
	assert_int_equal(o.nr_pids, 1);
	assert_true(o.placement_entry && o.unwind_unsafe && o.no_demangle && o.json);
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_LIST, 3, no_lib, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "no library"));
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_LIST, 5, command, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "list takes no command"));
	cli_opts_free(&o);
	assert_int_equal(cli_parse_cmd(CLI_LIST, 5, duration, &o, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--duration belongs to 'dlprof-bpf live'"));
	cli_opts_free(&o);
	assert_string_equal(cli_cmd_name(CLI_LIST), "list");
	assert_string_equal(cli_cmd_name(CLI_MERGE | CLI_EXPORT), "merge");
	assert_string_equal(cli_cmd_name(CLI_AGENT), "agent");
	assert_string_equal(cli_cmd_name(CLI_SELECTING), "live");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_command),
		cmocka_unit_test(test_command_options_not_ours),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_command_end_options),
		cmocka_unit_test(test_help_without_lib),
		cmocka_unit_test(test_commands_answer_help),
		cmocka_unit_test(test_record_options),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_selection_demangled),
		cmocka_unit_test(test_func_names_with_commas),
		cmocka_unit_test(test_export_formats),
		cmocka_unit_test(test_top_and_html),
		cmocka_unit_test(test_list_options),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
