// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/report_html.h"

/* The first bins' width; it doubles until the recording fits. */
#define TIMELINE_FIRST_BIN_NS 1000000ull

int report_timeline_init(struct report_timeline *t, uint64_t start_ns)
{
	memset(t, 0, sizeof(*t));
	t->start_ns = start_ns;
	t->bin_ns = TIMELINE_FIRST_BIN_NS;
	t->tracks = calloc(TIMELINE_MAX_TRACKS, sizeof(*t->tracks));
	return t->tracks ? 0 : -ENOMEM;
}

static void halve(struct timeline_track *tr)
{
	for (size_t i = 0; i < TIMELINE_BINS / 2; i++)
		tr->bins[i] = tr->bins[2 * i] + tr->bins[2 * i + 1];
	memset(tr->bins + TIMELINE_BINS / 2, 0, sizeof(tr->bins) / 2);
}

/* Twice as wide bins, half as many used: every track's pairs merged. */
static void widen(struct report_timeline *t)
{
	for (size_t i = 0; i < t->nr_tracks; i++)
		halve(&t->tracks[i]);
	halve(&t->other);
	t->bin_ns *= 2;
}

static struct timeline_track *track_of(struct report_timeline *t, uint32_t pid, uint32_t tid)
{
	struct timeline_track *tr;

	if (t->last < t->nr_tracks && t->tracks[t->last].tid == tid && t->tracks[t->last].pid == pid)
		return &t->tracks[t->last];
	for (size_t i = 0; i < t->nr_tracks; i++)
		if (t->tracks[i].tid == tid && t->tracks[i].pid == pid) {
			t->last = i;
			return &t->tracks[i];
		}
	if (t->nr_tracks == TIMELINE_MAX_TRACKS)
		return &t->other;
	tr = &t->tracks[t->nr_tracks];
	tr->pid = pid;
	tr->tid = tid;
	t->last = t->nr_tracks++;
	return tr;
}

void report_timeline_add(struct report_timeline *t, uint32_t pid, uint32_t tid, uint64_t ts_ns)
{
	/* A call entered before the recording started (it returned after) goes into the first bin. */
	uint64_t at = ts_ns > t->start_ns ? ts_ns - t->start_ns : 0;
	struct timeline_track *tr;

	if (!t->tracks)
		return;
	while (at / t->bin_ns >= TIMELINE_BINS)
		widen(t);
	tr = track_of(t, pid, tid);
	tr->bins[at / t->bin_ns]++;
	tr->calls++;
	if (ts_ns > t->end_ns)
		t->end_ns = ts_ns;
}

void report_timeline_fini(struct report_timeline *t)
{
	if (!t)
		return;
	free(t->tracks);
	t->tracks = NULL;
}
