/* SPDX-License-Identifier: GPL-2.0-or-later */
/* shstkctl allow: an override that enforces a shadow stack for a binary, a package or a build (body in cli/override.c). */
#include "commands.h"
#include "override.h"

int cmd_allow(int argc, char **argv, struct shstkctl *ctl)
{
	return shstkctl_override_main(ctl, "allow", argc, argv);
}
