// SPDX-License-Identifier: GPL-2.0-only
/* Configure-time check that clang can link a libFuzzer target here. */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}
