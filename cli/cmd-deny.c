/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl deny: an override that keeps shadow stacks off for a binary, a package or a build (body in cli/override.c). */
#include "commands.h"
#include "override.h"

int cmd_deny(int argc, char **argv, struct shstkctl *ctl)
{
	return shstkctl_override_main(ctl, "deny", argc, argv);
}
