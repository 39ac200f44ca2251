/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shstkctl commands: one file cli/cmd-<name>.c each, defining
 * cmd_<name>(argc, argv, ctl) with argv[0] the command's name and ctl the
 * global options (common.h).  Every one is in
 * shstkctl.c's table: a command without its function does not link.
 */
#ifndef SHSTKCTL_COMMANDS_H
#define SHSTKCTL_COMMANDS_H

struct shstkctl;

#define SHSTKCTL_CMD(name) int cmd_##name(int argc, char **argv, struct shstkctl *ctl)

SHSTKCTL_CMD(allow);
SHSTKCTL_CMD(allowlist);
SHSTKCTL_CMD(decisions);
SHSTKCTL_CMD(deny);
SHSTKCTL_CMD(explain);
SHSTKCTL_CMD(export);
SHSTKCTL_CMD(fleet);
SHSTKCTL_CMD(gate);
SHSTKCTL_CMD(import);
SHSTKCTL_CMD(policy);
SHSTKCTL_CMD(preload);
SHSTKCTL_CMD(ps);
SHSTKCTL_CMD(report);
SHSTKCTL_CMD(reset);
SHSTKCTL_CMD(scan);
SHSTKCTL_CMD(stage);
SHSTKCTL_CMD(status);
SHSTKCTL_CMD(verify);
SHSTKCTL_CMD(violations);

#endif
