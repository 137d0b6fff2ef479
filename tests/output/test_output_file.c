// SPDX-License-Identifier: GPL-2.0-only
/*
 * Outputs: written whole through a temporary file, only over a regular
 * file, never over or inside the input; a refusal leaves everything as it
 * was and says what to do in one line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <cmocka.h>

#include "output/output_file.h"

struct fixture {
	char dir[64];
	char path[256];
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	snprintf(f->dir, sizeof(f->dir), "/tmp/dlprof-out-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		return -1;
	free(f);
	return 0;
}

static char *at(struct fixture *f, const char *name)
{
	snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
	return f->path;
}

static void put(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void expect_content(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *fp = fopen(path, "r");

	assert_non_null(fp);
	assert_true(fread(buf, 1, sizeof(buf) - 1, fp) < sizeof(buf));
	fclose(fp);
	assert_string_equal(buf, text);
}

/* Entries in the scratch directory: a refusal or a failure leaves no temporary file. */
static int nr_entries(struct fixture *f)
{
	DIR *d = opendir(f->dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

/* One line, naming the path, saying what to do. */
static void expect_refusal(const char *path, const char *input, const char *what)
{
	struct output_file *o = (void *)1;
	char err[512];

	assert_int_equal(output_file__open(&o, path, input, err, sizeof(err)), -EEXIST);
	assert_null(o);
	if (!strstr(err, path) || !strstr(err, what) || !strstr(err, "; give -o") || strchr(err, '\n'))
		fail_msg("refusal of %s: %s", path, err);
}

static void write_and_commit(const char *path, const char *input, const char *text)
{
	struct output_file *o;
	char err[512];
	FILE *fp;

	assert_int_equal(output_file__open(&o, path, input, err, sizeof(err)), 0);
	fp = output_file__stream(o);
	assert_non_null(fp);
	fputs(text, fp);
	assert_int_equal(output_file__commit(o), 0);
	output_file__free(o);
}

static void test_new_and_replace(void **state)
{
	struct fixture *f = *state;
	struct stat st;

	write_and_commit(at(f, "out.json"), NULL, "one\n");
	expect_content(f->path, "one\n");
	assert_int_equal(chmod(f->path, 0640), 0);
	write_and_commit(f->path, NULL, "two\n");
	expect_content(f->path, "two\n");
	assert_int_equal(stat(f->path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);	/* the replaced file's mode is kept */
	assert_int_equal(nr_entries(f), 1);
}

/* Until commit, the old file is untouched; without commit nothing is left. */
static void test_not_committed(void **state)
{
	struct fixture *f = *state;
	struct output_file *o;
	char err[512];

	put(at(f, "keep.txt"), "old\n");
	assert_int_equal(output_file__open(&o, f->path, NULL, err, sizeof(err)), 0);
	fputs("new\n", output_file__stream(o));
	fflush(output_file__stream(o));
	expect_content(f->path, "old\n");
	assert_int_equal(nr_entries(f), 2);
	output_file__free(o);
	expect_content(f->path, "old\n");
	assert_int_equal(nr_entries(f), 1);
	output_file__free(NULL);
}

static void test_special_files(void **state)
{
	struct fixture *f = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int s;

	expect_refusal("/dev/full", NULL, "character device");
	expect_refusal("/dev/null", NULL, "character device");
	assert_int_equal(mkfifo(at(f, "fifo"), 0600), 0);
	expect_refusal(f->path, NULL, "FIFO");
	put(at(f, "target"), "target\n");
	assert_int_equal(symlink("target", at(f, "link")), 0);
	expect_refusal(f->path, NULL, "symbolic link");
	assert_int_equal(symlink("/nonexistent/x", at(f, "dangling")), 0);
	expect_refusal(f->path, NULL, "symbolic link");
	assert_int_equal(mkdir(at(f, "dir"), 0700), 0);
	expect_refusal(f->path, NULL, "directory");
	s = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(strlen(at(f, "sock")) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, f->path, strlen(f->path));
	assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
	expect_refusal(f->path, NULL, "socket");
	close(s);
	/* Nothing was touched: the link's target, and no temporary file anywhere. */
	expect_content(at(f, "target"), "target\n");
	assert_int_equal(nr_entries(f), 6);
}

static void test_own_input(void **state)
{
	struct fixture *f = *state;
	char input[256], alias[300];

	/* A trace directory as the input: nothing inside it, however named. */
	assert_int_equal(mkdir(at(f, "trace.d"), 0700), 0);
	snprintf(input, sizeof(input), "%s", f->path);
	put(at(f, "trace.d/meta.json"), "{}\n");
	expect_refusal(f->path, input, "inside the input directory");
	expect_refusal(input, input, "directory");
	expect_refusal(at(f, "trace.d/cpu0.shard"), input, "inside the input directory");
	expect_refusal(at(f, "trace.d/new.dlt"), input, "inside the input directory");
	assert_int_equal(mkdir(at(f, "trace.d/sub"), 0700), 0);
	expect_refusal(at(f, "trace.d/sub/x.dlt"), input, "inside the input directory");
	/* Another name for the directory (a symlink to it) does not hide it. */
	snprintf(alias, sizeof(alias), "%s/alias", f->dir);
	assert_int_equal(symlink(input, alias), 0);
	snprintf(alias, sizeof(alias), "%s/alias/x.dlt", f->dir);
	expect_refusal(alias, input, "inside the input directory");
	expect_content(at(f, "trace.d/meta.json"), "{}\n");
	/* A .dlt as the input, by another (hard-linked) name too. */
	put(at(f, "in.dlt"), "dlt\n");
	snprintf(input, sizeof(input), "%s", f->path);
	expect_refusal(input, input, "is the input");
	assert_int_equal(link(input, at(f, "same.dlt")), 0);
	expect_refusal(f->path, input, "is the input");
	expect_content(input, "dlt\n");
	/* Beside the input is fine. */
	write_and_commit(at(f, "out.dlt"), input, "out\n");
	expect_content(f->path, "out\n");
}

static void test_cannot_create(void **state)
{
	struct output_file *o;
	char err[512];

	(void)state;
	assert_int_equal(output_file__open(&o, "/nonexistent/x.json", NULL, err, sizeof(err)), -ENOENT);
	assert_null(o);
	assert_non_null(strstr(err, "cannot create /nonexistent/x.json"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_new_and_replace, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_committed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_special_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_own_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cannot_create, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
