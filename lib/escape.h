/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Untrusted strings (file names, DT_NEEDED and DT_RUNPATH, a process's
 * comm, anything from an imported bundle) made safe for a terminal, as
 * systemd's cescape() does: C escapes (\a \b \t \n \v \f \r \\) and \xNN
 * for every other control byte, DEL, C1 control (U+0080 to U+009F: a
 * terminal may take U+009B for CSI) and byte that is not printable UTF-8.
 * Printable UTF-8 passes, so a name in any script reads as itself.  No
 * name can then move the cursor, ring, recolour the terminal or forge a
 * line of output.
 */
#ifndef SHSTK_ESCAPE_H
#define SHSTK_ESCAPE_H

/* 0 when @s (or NULL) needs no escaping; 1 with the escaped copy in *ret
 * (free it); -ENOMEM. */
int shstk_cescape(const char *s, char **ret);

#endif
