/* SPDX-License-Identifier: GPL-2.0-only */
/* IFUNC resolvers that kill the process resolving them: the helper must die, not us. */

typedef int tc_fn(int);

static tc_fn *tc_resolver(void)
{
	__builtin_trap();
}

int tc_ifunc_1(int x) __attribute__((ifunc("tc_resolver")));

static tc_fn *tc_resolver_2(void)
{
	__builtin_trap();
}

int tc_ifunc_2(int x) __attribute__((ifunc("tc_resolver_2")));

int tc_plain(int x)
{
	return x + 1;
}
