/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `shstkctl allowlist` as a standalone test tool, built from the same
 * cli/cmd-allowlist.c, so that tests and benchmarks can write allowlists.
 */
int cmd_allowlist(int argc, char **argv);

int main(int argc, char **argv)
{
	return cmd_allowlist(argc, argv);
}
