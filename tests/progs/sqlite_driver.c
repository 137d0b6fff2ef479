/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A program that uses libsqlite3 through its API, as an application does,
 * and times its own sqlite3_step() calls: the unprobed truth that a
 * boundary profile of the whole library is held to.
 *
 *   sqlite_driver CALLS    runs CALLS times a query that scans a small table,
 *                          then prints "steps N step_p50_ns P": the steps it
 *                          made in all (setup included) and the median of
 *                          the timed ones.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROWS 200

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static void die(sqlite3 *db, const char *what)
{
	fprintf(stderr, "sqlite_driver: %s: %s\n", what, sqlite3_errmsg(db));
	exit(1);
}

/* ROWS rows, one step each: the setup's steps. */
static long fill(sqlite3 *db)
{
	sqlite3_stmt *st;
	long steps = 0;

	if (sqlite3_exec(db, "create table t(k integer primary key, v text); begin", NULL, NULL, NULL))
		die(db, "create");
	if (sqlite3_prepare_v2(db, "insert into t values(?, ?)", -1, &st, NULL))
		die(db, "prepare insert");
	for (int i = 0; i < ROWS; i++) {
		char v[32];

		snprintf(v, sizeof(v), "row %d of the table", i * 7919 % 1000);
		sqlite3_bind_int(st, 1, i);
		sqlite3_bind_text(st, 2, v, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(st) != SQLITE_DONE)
			die(db, "insert");
		steps++;
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (sqlite3_exec(db, "commit", NULL, NULL, NULL))
		die(db, "commit");
	return steps;
}

int main(int argc, char **argv)
{
	int calls = argc > 1 ? atoi(argv[1]) : 10000;
	long long *took = calloc(calls > 0 ? calls : 1, sizeof(*took));
	long steps, found = 0;
	sqlite3_stmt *st;
	sqlite3 *db;

	if (calls <= 0 || !took || sqlite3_open(":memory:", &db))
		return 2;
	steps = fill(db);
	if (sqlite3_prepare_v2(db, "select count(*) from t where v like ?", -1, &st, NULL))
		die(db, "prepare select");
	for (int i = 0; i < calls; i++) {
		long long t0;
		int rc;

		sqlite3_bind_text(st, 1, i % 2 ? "%1%" : "%7%", -1, SQLITE_STATIC);
		t0 = now_ns();
		rc = sqlite3_step(st);
		took[i] = now_ns() - t0;
		steps++;
		if (rc != SQLITE_ROW)
			die(db, "select");
		found += sqlite3_column_int(st, 0);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	sqlite3_close(db);
	qsort(took, calls, sizeof(*took), cmp_ll);
	printf("steps %ld step_p50_ns %lld found %ld\n", steps, took[calls / 2], found);
	free(took);
	return 0;
}
