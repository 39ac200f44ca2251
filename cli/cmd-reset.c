/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl reset: remove an administrator's override: evidence and policy decide again (body in cli/override.c). */
#include "commands.h"
#include "override.h"

int cmd_reset(int argc, char **argv, struct shstkctl *ctl)
{
	return shstkctl_override_main(ctl, "reset", argc, argv);
}
