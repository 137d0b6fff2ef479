// SPDX-License-Identifier: GPL-2.0-only
#include "cmd/commands.h"

int main(int argc, char **argv)
{
	return commands_main(argc, argv);
}
