/* SPDX-License-Identifier: GPL-2.0-only */
/* callers_lib.c: a library between the driver and the test library. */
#ifndef CALLERS_H
#define CALLERS_H

/* Calls dlt_add() n times. */
int callers_relay(int n);

#endif
