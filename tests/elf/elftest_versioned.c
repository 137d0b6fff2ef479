// SPDX-License-Identifier: GPL-2.0-only
/*
 * One exported name in two versions, as glibc does (memcpy@GLIBC_2.2.5 and
 * memcpy@@GLIBC_2.14): tv_func@TV_1 is the old one, tv_func@@TV_2 the
 * default that new links bind to. Each version's implementation returns
 * its own value, so a test can tell which one dlvsym() gave.
 */
int tv_old(int x);
int tv_new(int x);

int tv_old(int x)
{
	return x + 1;
}

int tv_new(int x)
{
	return x + 2;
}

int tv_plain(int x)
{
	return x + 3;
}

__asm__(".symver tv_old, tv_func@TV_1");
__asm__(".symver tv_new, tv_func@@TV_2");
