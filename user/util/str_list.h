/* SPDX-License-Identifier: GPL-2.0-only */
/* A list of owned strings: what a repeatable option or a selection holds. */
#ifndef DLPROF_UTIL_STR_LIST_H
#define DLPROF_UTIL_STR_LIST_H

#include <stddef.h>

struct str_list {
	char **items;		/* owned copies */
	size_t cnt;
};

/* Append a copy of the first len bytes of s. 0 or -ENOMEM. */
int str_list_push(struct str_list *l, const char *s, size_t len);
/* NULL-safe; leaves l empty. */
void str_list_free(struct str_list *l);

#endif /* DLPROF_UTIL_STR_LIST_H */
