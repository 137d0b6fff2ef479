// SPDX-License-Identifier: GPL-2.0-only
#include <string.h>

#include "model/latency_trust.h"

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

/*
 * The nested calls' probes: what compensation took off for them (their
 * least cost, no more than it took in all: a call taken to 0 lost less),
 * and what they may have left in (LATENCY_NESTED_SPREADS calibration
 * spreads per pair). Their share is of a median call as measured (its
 * compensated time, its own probes' share and its nested pairs'): a
 * total holds whatever preempted calls waited, which would hide them.
 */
static void children_of(struct latency_trust *t, const struct func_summary *s, const struct comp_calib *c)
{
	uint64_t taken = less(s->raw_total_ns, s->total_ns), least = 0, per_call, typical;

	for (int k = 0; k < DLPROF_PROBE_CLASSES; k++) {
		least += s->nested[k] * c->pair_least_ns[k];
		t->children_spread_ns += s->nested[k] * LATENCY_NESTED_SPREADS * less(c->pair_ns[k], c->pair_least_ns[k]);
	}
	t->children_ns = least < taken ? least : taken;
	per_call = t->children_ns / s->returns;
	typical = s->p50_ns + c->own_ns[DLPROF_PROBE_EMULATED] + per_call;
	if (typical)
		t->children_share = (double)per_call / (double)typical;
}

void latency_trust_of(struct latency_trust *t, const struct func_summary *s, const struct comp_calib *c,
		      bool compensated)
{
	memset(t, 0, sizeof(*t));
	if (!compensated || !s->returns)
		return;
	children_of(t, s, c);
	/*
	 * A call's own share is taken off at its median: how far a call's own
	 * probes stray from it is the calibration's spread, and its nested
	 * pairs add theirs.
	 */
	t->bound_ns = c->own_spread_ns[DLPROF_PROBE_EMULATED] + t->children_spread_ns / s->returns;
	/* Of the median call, for the same reason as the share. */
	t->uncertain = t->children_spread_ns / s->returns > s->p50_ns / LATENCY_UNCERTAIN_DIV ||
		       t->children_share > LATENCY_UNCERTAIN_SHARE;
}
