/* SPDX-License-Identifier: GPL-2.0-only */
/* The agent's own metrics (dlprof_agent_*): what it probes, what that costs, what it lost. */
#ifndef DLPROF_AGENT_SELF_H
#define DLPROF_AGENT_SELF_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent_profile.h"
#include "agent/otlp_push.h"
#include "agent/prom_text.h"

struct agent_self {
	struct agent_profile_stats prof;	/* of the running profile */
	bool attached;
	size_t series_exposed;
	uint64_t series_folded;
	uint64_t reloads;
	uint64_t errors;
	unsigned long scrapes;
	double last_detach_s;
	bool otlp;			/* pushing OTLP: otlp_st holds its counts */
	struct otlp_push_stats otlp_st;
};

void agent_self_render(const struct agent_self *a, struct prom_buf *b);

#endif /* DLPROF_AGENT_SELF_H */
