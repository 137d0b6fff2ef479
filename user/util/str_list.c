// SPDX-License-Identifier: GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/array.h"
#include "util/str_list.h"

int str_list_push(struct str_list *l, const char *s, size_t len)
{
	char **slot = ARRAY_SLOT(l->items, l->cnt);

	if (!slot)
		return -ENOMEM;
	*slot = strndup(s, len);
	if (!*slot)
		return -ENOMEM;
	l->cnt++;
	return 0;
}

void str_list_free(struct str_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->cnt; i++)
		free(l->items[i]);
	free(l->items);
	l->items = NULL;
	l->cnt = 0;
}
