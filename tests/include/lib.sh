# SPDX-License-Identifier: GPL-2.0-or-later
# What the shell tests share; source it with
#   . "$SHSTK_SRCDIR/tests/include/lib.sh"
# (POSIX sh: the tests run under dash and bash alike).

# A prerequisite the test cannot run without: fail, naming it and how to get
# it.  Never a skip: a machine without it must show red.
missing() {
	echo "missing: $1 ($2)"
	exit 1
}

# need_cmd CMD [PACKAGE]: the command must be on PATH.
need_cmd() {
	command -v "$1" >/dev/null 2>&1 || missing "$1" "apt-get install ${2:-$1}"
}

# need_root WHY: the test must run as root.
need_root() {
	[ "$(id -u)" = 0 ] || missing "root" "$1"
}

# wait_for SECONDS CMD [ARGS...]: runs CMD every 20 ms until it succeeds.
# Returns 0 as soon as it does, 1 when SECONDS have passed without.  The
# bound is a deadlock guard, not an assertion about speed.
wait_for() {
	_wf_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_wf_end" ] || return 1
		sleep 0.02
	done
	return 0
}
