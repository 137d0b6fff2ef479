// SPDX-License-Identifier: GPL-2.0-only
/*
 * The latency compensation's workload (built with frame pointers and no
 * CET, so each function starts with push %rbp, an instruction the kernel
 * emulates): comp_outer spins a known time around calls of comp_inner.
 */
volatile unsigned long comp_sink;

/* comptest_inner.S: its first instruction must be push %rbp, whatever the compiler does. */
int comp_inner(int x);

/* n chunks of spin_iters loop iterations, each followed by a call of comp_inner. */
__attribute__((noinline)) int comp_outer(unsigned long spin_iters, int n)
{
	int r = 0;

	for (int i = 0; i < n; i++) {
		for (unsigned long k = 0; k < spin_iters; k++)
			comp_sink = k;
		r += comp_inner(i);
	}
	return r;
}
