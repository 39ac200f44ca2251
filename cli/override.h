/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The body shared by `shstkctl allow`, `deny` and `reset` (cli/override.c). */
#ifndef SHSTKCTL_OVERRIDE_H
#define SHSTKCTL_OVERRIDE_H

/* `reset` of an override that does not exist. */
enum { OVERRIDE_EXIT_NONE = 3 };

/* @cmd: "allow", "deny" or "reset" (also the override's action). */
struct shstkctl;

int shstkctl_override_main(struct shstkctl *ctl, const char *cmd, int argc, char **argv);

#endif
