// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent/install_cost.h"
#include "util/clock.h"

/* Medians of a few mappings: a preemption in one leaves them alone. */
#define MAP_RUNS 5
/* Fewer linked functions than this add too little to a mapping to be told from its noise (a few us). */
#define CALIB_MIN_FUNCS 8
/*
 * The mapping rate is smoothed over this long as it rises: a process every
 * two seconds is a rate, a single start is a cost once, and the budget is
 * a rate ...
 */
#define RATE_TAU_S 10.0
/*
 * ... and over this long as it falls: starts come in storms (a deployment
 * restarting its pods, a cron minute), and the quiet between two storms is
 * not a lower rate. Fallen at the rising pace, the rate would bring the
 * functions a storm shed back in time for the next one, a relink each way.
 */
#define RATE_FALL_TAU_S 60.0
/*
 * A library no process maps now may be mapped by the next one to start:
 * one start must fit in a second's allowance, as a burst of calls must
 * (the reaction's rule), so the rate counts as one a second at least.
 */
#define RATE_FLOOR_PER_S 1.0

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/*
 * The median ns of a private, executable mapping of the whole of path (as
 * ld.so maps text: the kernel writes the breakpoints into it) and its
 * unmapping (their pages freed): 0, or -errno.
 */
static int map_ns(const char *path, double *ns)
{
	double t[MAP_RUNS];
	struct stat st;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto cleanup;
	}
	if (st.st_size <= 0) {
		err = -EINVAL;
		goto cleanup;
	}
	for (int i = 0; i < MAP_RUNS; i++) {
		double t0 = (double)mono_ns();
		void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);

		if (m == MAP_FAILED) {
			err = -errno;
			goto cleanup;
		}
		munmap(m, (size_t)st.st_size);
		t[i] = (double)mono_ns() - t0;
	}
	qsort(t, MAP_RUNS, sizeof(t[0]), by_value);
	*ns = t[MAP_RUNS / 2];
cleanup:
	close(fd);
	return err;
}

int install_cost__init(struct install_cost *c, const struct session *s)
{
	const struct probe_table *t = session__table(s);

	*c = (struct install_cost){ .nr_libs = t->nr_libs };
	c->base_ns = calloc(c->nr_libs ?: 1, sizeof(*c->base_ns));
	c->rate = calloc(c->nr_libs ?: 1, sizeof(*c->rate));
	c->mappings = calloc(c->nr_libs ?: 1, sizeof(*c->mappings));
	c->scratch = calloc(c->nr_libs ?: 1, sizeof(*c->scratch));
	if (!c->base_ns || !c->rate || !c->mappings || !c->scratch)
		return -ENOMEM;
	for (size_t k = 0; k < c->nr_libs; k++)
		if (map_ns(t->libs[k].file->path, &c->base_ns[k]))
			c->base_ns[k] = -1;
	c->counting = !session__read_mappings(s, c->mappings);
	for (size_t k = 0; k < c->nr_libs; k++)
		c->total += c->mappings[k];
	return 0;
}

bool install_cost__calibrate(struct install_cost *c, const struct session *s, const bool *on, size_t *lib,
			     size_t *funcs, double *ns)
{
	const struct probe_table *t = session__table(s);
	size_t best = 0, best_n = 0;

	if (c->measured)
		return false;
	for (size_t k = 0; k < t->nr_libs; k++) {
		size_t n = 0;

		for (size_t i = t->libs[k].first_func; i < t->libs[k].first_func + t->libs[k].nr_funcs; i++)
			n += on[i];
		if (n > best_n && c->base_ns[k] >= 0) {
			best = k;
			best_n = n;
		}
	}
	if (best_n < CALIB_MIN_FUNCS || map_ns(t->libs[best].file->path, ns))
		return false;
	/* Below the unlinked mapping: nothing measurable, which is a measurement too. */
	c->ns_per_func = fmax(*ns - c->base_ns[best], 0) / (double)best_n;
	c->measured = true;
	*lib = best;
	*funcs = best_n;
	return true;
}

void install_cost__update(struct install_cost *c, const struct session *s, double now)
{
	if (c->counting && !session__read_mappings(s, c->scratch))
		install_cost__count(c, c->scratch, now);
}

void install_cost__count(struct install_cost *c, const uint64_t *mappings, double now)
{
	double dt = now - c->t;

	for (size_t k = 0; k < c->nr_libs; k++) {
		double d = (double)(mappings[k] - c->mappings[k]);

		if (c->t > 0 && dt > 0)
			c->rate[k] += (d / dt - c->rate[k]) *
				      -expm1(-dt / (d / dt > c->rate[k] ? RATE_TAU_S : RATE_FALL_TAU_S));
		c->total += mappings[k] - c->mappings[k];
		c->mappings[k] = mappings[k];
	}
	c->t = now;
}

double install_cost__per_func(const struct install_cost *c, size_t lib)
{
	return c->measured && lib < c->nr_libs ? fmax(c->rate[lib], RATE_FLOOR_PER_S) * c->ns_per_func : 0;
}

void install_cost__free(struct install_cost *c)
{
	free(c->base_ns);
	free(c->rate);
	free(c->mappings);
	free(c->scratch);
	*c = (struct install_cost){};
}
