/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The processes seen, by pid and start time: what tells that the process
 * once seen under a pid has exited, even when a new one holds its pid
 * now. The kernel's maps keyed by pid (--by caller's return addresses)
 * would otherwise give the new process the old one's entries.
 */
#ifndef DLPROF_PID_LIVES_H
#define DLPROF_PID_LIVES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pid_lives;

struct pid_lives *pid_lives__new(void);
/*
 * Whether the process seen as pid has ended, start_now being the start
 * time of the process that holds pid now (proc_start_time(); 0: none).
 * A pid not seen before is remembered with start_now and has not ended,
 * unless no process holds it. An ended pid is forgotten: the next
 * process to hold it is a new one. *err: -ENOMEM when a pid could not be
 * remembered (it is then asked about again).
 */
bool pid_lives__ended(struct pid_lives *pl, uint32_t pid, uint64_t start_now, int *err);
size_t pid_lives__count(const struct pid_lives *pl);
void pid_lives__free(struct pid_lives *pl);

#endif /* DLPROF_PID_LIVES_H */
