// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"

int array_reserve(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;
	void *n;

	if (need <= *cap)
		return 0;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	if (elem && ncap > SIZE_MAX / elem)
		return -ENOMEM;
	n = realloc(*arr, ncap * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = ncap;
	return 0;
}

void *array_slot(void **arr, size_t cnt, size_t elem)
{
	char *n;

	if (elem && cnt + 1 > SIZE_MAX / elem)
		return NULL;
	n = realloc(*arr, (cnt + 1) * elem);
	if (!n)
		return NULL;
	*arr = n;
	memset(n + cnt * elem, 0, elem);
	return n + cnt * elem;
}
