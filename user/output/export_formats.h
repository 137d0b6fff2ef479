/* SPDX-License-Identifier: GPL-2.0-only */
/* The formats that export writes, each in its own file, for exporter.c's table. */
#ifndef DLPROF_OUTPUT_EXPORT_FORMATS_H
#define DLPROF_OUTPUT_EXPORT_FORMATS_H

#include "output/exporter.h"

/* The command name h's metadata gives pid, or NULL. */
const char *export_comm(const struct export_head *h, uint32_t pid);
/* The thread's own name h's metadata gives tid of pid, or NULL (older traces have none). */
const char *export_thread_comm(const struct export_head *h, uint32_t pid, uint32_t tid);

int perfetto_begin(FILE *out, struct export_head *h);
void perfetto_record(FILE *out, const struct export_head *h, const struct export_call *c);
void perfetto_loss(FILE *out, const struct export_head *h, const struct export_loss *l);
int perfetto_end(FILE *out, struct export_head *h);

int folded_begin(FILE *out, struct export_head *h);
void folded_record(FILE *out, const struct export_head *h, const struct export_call *c);
int folded_end(FILE *out, struct export_head *h);

#endif /* DLPROF_OUTPUT_EXPORT_FORMATS_H */
