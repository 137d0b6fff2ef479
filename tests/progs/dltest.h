/* SPDX-License-Identifier: GPL-2.0-only */
/* The test library's functions: each one a behaviour the profiler must get right. */
#ifndef DLTEST_H
#define DLTEST_H

#include <setjmp.h>

int dlt_add(int a, int b);
int dlt_recurse(int depth);
void dlt_sleep_ms(int ms);
void dlt_longjmp(jmp_buf env);
void dlt_outer(jmp_buf env);
void dlt_touch_pages(int pages);
int dlt_apply(int (*fn)(int, int), int a);
int dlt_ifunc_add(int a, int b);
void dlt_spin_ms(int ms);
void dlt_spin_migrate(int ms);
void dlt_nap(int naps);
void dlt_spin_touch(int ms, int pages);
/* dltest_asm.S: entries with known instructions. */
int dlt_test_je(int x);
void dlt_loop_head(int n);
int dlt_loop_second(int n);

#endif
