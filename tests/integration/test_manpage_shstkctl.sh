#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# shstkctl(8) against the built shstkctl, so that the page cannot silently
# rot: every command `shstkctl --help` lists has a subsection (.SS) under
# COMMANDS and every subsection there is a command; every option a command's
# --help prints (usage lines and option lists) appears in that command's
# subsection, and every option the subsection documents as a tag (.TP) is
# one its --help prints; -h/--help, which every command takes, is stated
# once in the COMMANDS introduction.  Then the page must render without
# warnings (man --warnings), with its @VAR@ paths filled in.
set -eu
: "${SHSTK_BUILDDIR:?}" "${SHSTK_SRCDIR:?}"
. "$SHSTK_SRCDIR/tests/include/lib.sh"
ctl=$SHSTK_BUILDDIR/cli/shstkctl
page=$SHSTK_SRCDIR/cli/shstkctl.8.in
[ -x "$ctl" ] || { echo "FAIL: $ctl not built"; exit 1; }
need_cmd man man-db
need_cmd groff groff-base
[ -f "$page" ] || { echo "FAIL: $page does not exist"; exit 1; }

work=$(mktemp -d /tmp/test-manpage.XXXXXX)
trap 'rm -rf "$work"' EXIT
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# The roff source as plain words: \- is '-', font and other escapes and
# macro names go, quotes become blanks.  Options are then searched as words.
sed -e 's/\\-/-/g' -e 's/\\%//g' -e 's/\\&//g' -e 's/\\f[BIRP]//g' \
    -e 's/\\(..//g' -e 's/\\e/\\/g' -e 's/\\|//g' -e 's/\\~/ /g' \
    -e 's/^\.\(SS\|SH\) */.\1 /' -e 's/"/ /g' "$page" >"$work/page.txt"

# section NAME: the text of subsection NAME of COMMANDS (up to the next .SS or .SH).
section() {
	awk -v want="$1" '
		/^\.SH / { in_cmds = ($2 == "COMMANDS"); on = 0; next }
		/^\.SS / { on = in_cmds && $2 == want && NF == 2; next }
		on { print }' "$work/page.txt"
}

# has_word FILE OPT: OPT occurs in FILE, not as part of a longer option.
has_word() {
	grep -Eq -- "(^|[^A-Za-z0-9-])$2([^A-Za-z0-9-]|\$)" "$1"
}

# help_options FILE: the options a --help text prints, one a line: those in
# the usage lines (up to the first blank line) and the leading ones of each
# option-list line ("  -o, --output FILE  ...").
help_options() {
	{
		sed '/^$/q' "$1" | grep -Eo -- '(^|[[ |(])--?[A-Za-z][A-Za-z0-9-]*' |
			sed 's/^[[ |(]//'
		grep -E -- '^ +-[A-Za-z-]' "$1" |
			grep -Eo -- '^ +(-[A-Za-z0-9](, )?)?(--[A-Za-z0-9][A-Za-z0-9-]*)?' |
			tr ',' ' ' | tr ' ' '\n'
	} | grep -E -- '^--?[A-Za-z]' | sort -u
}

"$ctl" --help >"$work/help" || fail "shstkctl --help exited $?"
awk '/^Commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }' "$work/help" >"$work/commands"
ncmd=$(wc -l <"$work/commands")
# A parser that found nothing would make every check below pass.
[ "$ncmd" -ge 10 ] || fail "only $ncmd commands parsed from shstkctl --help"

section_names() {
	awk '/^\.SH / { c = ($2 == "COMMANDS"); next } c && /^\.SS / { print $2 }' "$work/page.txt"
}
section_names | while read -r s; do
	grep -qx -- "$s" "$work/commands" || echo "$s"
done >"$work/extra"
while read -r s; do
	fail "the page has a subsection '$s' under COMMANDS, but shstkctl --help lists no such command"
done <"$work/extra"

# -h and --help: stated once for every command, in the introduction.
awk '/^\.SH / { c = ($2 == "COMMANDS"); next } /^\.SS / { c = 0 } c' "$work/page.txt" >"$work/intro"
for o in -h --help; do
	has_word "$work/intro" "$o" || fail "the COMMANDS introduction does not say every command takes $o"
done

nopt=0
while read -r cmd; do
	section "$cmd" >"$work/sec"
	if ! [ -s "$work/sec" ]; then
		fail "command '$cmd' (in shstkctl --help) has no subsection '.SS $cmd' under COMMANDS"
		continue
	fi
	if ! "$ctl" help "$cmd" >"$work/chelp" 2>&1; then
		fail "shstkctl help $cmd failed: $(head -n 3 "$work/chelp")"
		continue
	fi
	help_options "$work/chelp" | grep -vx -e -h -e --help >"$work/opts" || true
	n=$(wc -l <"$work/opts")
	[ "$n" -ge 1 ] || fail "no option parsed from 'shstkctl help $cmd'"
	nopt=$((nopt + n))
	while read -r o; do
		has_word "$work/sec" "$o" || fail "$cmd: option $o (in its --help) is missing from the subsection '$cmd' of the page"
	done <"$work/opts"
	# The other way: an option tag in the page that --help no longer prints.
	awk 'tp { print; tp = 0; next } /^\.TP/ { tp = 1 }' "$work/sec" |
		grep -Eo -- '(^|[ (])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[ (]//' | sort -u >"$work/tags"
	while read -r o; do
		has_word "$work/chelp" "$o" || fail "$cmd: the page documents $o, which 'shstkctl help $cmd' does not print"
	done <"$work/tags"
done <"$work/commands"
echo "checked $ncmd commands and $nopt options against the page"

# Placeholders: only the ones meson fills in (cli/meson.build).
vars=$(sed -n "s/^shstkctl_man_conf\.set('\([A-Z_]*\)'.*/\1/p" "$SHSTK_SRCDIR/cli/meson.build" | tr '\n' ' ')
[ -n "$vars" ] || fail "no shstkctl_man_conf.set() found in cli/meson.build"
grep -o '@[A-Z_]*@' "$page" | sort -u | tr -d @ >"$work/vars"
while read -r v; do
	case " $vars " in
	*" $v "*) ;;
	*) fail "the page uses @$v@, which is not one of: $vars" ;;
	esac
done <"$work/vars"

# Render the page as installed: the built one when meson made it, else the
# source with this project's default paths filled in.
built=$SHSTK_BUILDDIR/cli/shstkctl.8
if [ -f "$built" ]; then
	cp "$built" "$work/shstkctl.8"
	if grep -q '@[A-Z_]*@' "$work/shstkctl.8"; then
		fail "$built still has placeholders: $(grep -o '@[A-Z_]*@' "$work/shstkctl.8" | sort -u | tr '\n' ' ')"
	fi
else
	sed -e 's|@VERSION@|0|g' -e 's|@SYSCONFDIR@|/etc/shstk-policy|g' \
	    -e 's|@STATEDIR@|/var/lib/shstk-policy|g' -e 's|@RUNDIR@|/run/shstk-policy|g' \
	    -e 's|@LIBDIR@|/usr/lib/x86_64-linux-gnu|g' -e 's|@DOCDIR@|/usr/share/doc/shstk-policy|g' \
	    -e 's|@PKGDATADIR@|/usr/share/shstk-policy|g' \
	    -e 's|@PRELOAD_LINE@|/usr/$LIB/libshstk_preload.so|g' \
	    "$page" >"$work/shstkctl.8"
fi
# From standard input: man may drop root's privileges to read a file.
# The terminal's width and a wide one (80 last: read below).
for width in 132 80; do
	if ! MANWIDTH=$width man --warnings -l - <"$work/shstkctl.8" >"$work/rendered" 2>"$work/warn"; then
		fail "man -l failed: $(head -n 5 "$work/warn")"
	elif [ -s "$work/warn" ]; then
		fail "the page renders with warnings at width $width: $(head -n 10 "$work/warn")"
	fi
done
# Every subsection must have reached the rendered page as a heading.
while read -r cmd; do
	grep -qx -- "   $cmd" "$work/rendered" || fail "the rendered page has no heading '$cmd'"
done <"$work/commands"

if [ "$fails" -ne 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "ok"
