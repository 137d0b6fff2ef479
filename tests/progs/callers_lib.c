// SPDX-License-Identifier: GPL-2.0-only
/* A second library that calls the test library: its calls' caller is here, not in the driver. */
#include "callers.h"
#include "dltest.h"

int callers_relay(int n)
{
	int sum = 0;

	for (int i = 0; i < n; i++)
		sum += dlt_add(i, 2);
	return sum;
}
