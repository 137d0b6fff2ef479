/* SPDX-License-Identifier: GPL-2.0-only */
/* A program that imports two of libelftest's functions and no other: import_set's subject. */
int tl_global(int x);
int tl_weak(int x);

int main(int argc, char **argv)
{
	(void)argv;
	return tl_global(argc) + tl_weak(argc) == 0;
}
