/* SPDX-License-Identifier: GPL-2.0-only */
/* The start's notes on what a profile probes: functions left out, counted at entry only, and why. */
#ifndef DLPROF_CMD_TABLE_NOTES_H
#define DLPROF_CMD_TABLE_NOTES_H

struct probe_table;

/* One line per library and reason on stderr; with verbose > 0, one per function too. */
void table_notes_print(const struct probe_table *t, int verbose);

#endif /* DLPROF_CMD_TABLE_NOTES_H */
