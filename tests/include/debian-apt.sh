# SPDX-License-Identifier: GPL-2.0-or-later
# Reading Debian's archive from scripts (sourced, POSIX sh): the mirror this
# machine's apt sources already name (never a host name written in the
# repository), and apt-get/apt-cache over a private apt state, so that another
# release's index can be read without touching the machine's own.
# The sourcing script defines die().

# The mirror of this machine's apt sources: deb822 first (Debian 12's
# default), then the one-line format; never the security archive.
apt_mirror() {
	m=
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		m=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /-security/) { print $i; exit } }' "$f")
		[ -n "$m" ] && break
	done
	if [ -z "$m" ] && [ -r /etc/apt/sources.list ]; then
		m=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($i !~ /-security/) print $i; break } }' \
			/etc/apt/sources.list | head -n 1)
	fi
	[ -n "$m" ] || die "no Debian mirror found in /etc/apt/sources.list.d/*.sources or /etc/apt/sources.list"
	echo "$m"
}

# papt DIR TOOL ARG...: apt-get or apt-cache with every path redirected into DIR.
papt() {
	_a=$1
	_tool=$2
	shift 2
	"$_tool" -q -o Dir::Etc::sourcelist="$_a/sources.list" \
		-o Dir::Etc::sourceparts="$_a/sources.list.d" \
		-o Dir::Etc::preferencesparts="$_a/preferences.d" \
		-o Dir::State::Lists="$_a/lists" -o Dir::Cache="$_a/cache" \
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root "$@"
}

# papt_setup DIR TYPE SUITE: a private state in DIR for one line "TYPE mirror
# SUITE main" (TYPE deb or deb-src), its index fetched. Fails if it cannot be.
papt_setup() {
	_k=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -r "$_k" ] || die "missing: $_k (apt-get install debian-archive-keyring)"
	mkdir -p "$1/lists/partial" "$1/cache/archives/partial" "$1/sources.list.d" "$1/preferences.d"
	echo "$2 [signed-by=$_k] $(apt_mirror) $3 main" >"$1/sources.list"
	papt "$1" apt-get update >/dev/null
}
