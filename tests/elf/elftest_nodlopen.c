/* SPDX-License-Identifier: GPL-2.0-only */
/* A library dlopen() refuses: it reads a variable nothing defines. */

typedef int tn_fn(int);

extern int tn_missing_var;

int tn_read(void)
{
	return tn_missing_var;
}

static int tn_impl(int x)
{
	return x + 1;
}

static tn_fn *tn_resolver(void)
{
	return tn_impl;
}

int tn_ifunc(int x) __attribute__((ifunc("tn_resolver")));
