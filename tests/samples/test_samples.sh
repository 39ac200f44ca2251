#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Host test of the samples (suite integration): the manifest is valid and
# matches what was built; every sample is marked SHSTK (shstk-elfinfo and
# shstkctl explain agree), the plugin is not; the static scan says what the
# manifest says; and on this host, where nothing turns a shadow stack on,
# every sample runs to completion, with and without the preload (which must
# then be a no-op).  A crash of any sample fails the test.
set -eu
: "${SAMPLES_DIR:?}" "${SAMPLES_MANIFEST:?}" "${SHSTKCTL:?}" "${ELFINFO:?}" "${PRELOAD_LIB:?}"
here=$(dirname "$0")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 "$here/manifest.py" check "$SAMPLES_MANIFEST" || exit 1
python3 "$here/manifest.py" tsv "$SAMPLES_MANIFEST" "$tmp/m.tsv"
tab=$(printf '\t')

# Every sample-* the build made is in the manifest, and the other way round.
for f in "$SAMPLES_DIR"/sample-*; do
	[ -f "$f" ] && basename "$f"
done | sort >"$tmp/built"
grep -v '^#' "$tmp/m.tsv" | cut -f2 | sort >"$tmp/listed"
if ! cmp -s "$tmp/built" "$tmp/listed"; then
	fail "built samples and manifest differ:"
	diff "$tmp/built" "$tmp/listed" || true
fi

# Only the columns this host test needs; the verdicts are the Bochs lane's.
while IFS=$tab read -r name bin _ _ _ _ _ _ files _; do
	case $name in '#'*) continue ;; esac
	exe=$SAMPLES_DIR/$bin
	if [ ! -x "$exe" ]; then
		# The C++ sample is built only where meson found a C++ compiler.
		[ -e "$here/$name.cc" ] && echo "missing: a C++ compiler for $name (apt-get install g++, then reconfigure)"
		fail "$name: $exe not built"
		continue
	fi

	# Marked SHSTK, the lie included: lib/elfinfo and shstkctl explain.
	info=$("$ELFINFO" "$exe" 2>&1) || true
	feat=$(printf '%s\n' "$info" | sed -n 's/.* feature=\(0x[0-9a-f]*\) .*/\1/p')
	if [ -z "$feat" ] || [ $((feat & 2)) = 0 ]; then
		fail "$name: not marked SHSTK: $info"
	fi
	# Judged against the manifest after the loop, all in one python run.
	"$SHSTKCTL" explain --live --format=json "$exe" >"$tmp/explain-$name.json" || fail "$name: explain failed"
	# Every object of it claims SHSTK itself, the assembly included (<cet.h>):
	# -z shstk would hide a compiler that dropped the note.
	for o in "$SAMPLES_DIR/$bin.p"/*.o; do
		[ -f "$o" ] || { fail "$name: no objects in $SAMPLES_DIR/$bin.p"; break; }
		ofeat=$("$ELFINFO" "$o" 2>&1 | sed -n 's/.* feature=\(0x[0-9a-f]*\) .*/\1/p')
		if [ -z "$ofeat" ] || [ $((ofeat & 2)) = 0 ]; then
			fail "$name: object $(basename "$o") has no SHSTK note"
		fi
	done
	for f in $(printf '%s\n' "$files" | tr ',' ' '); do
		[ "$f" = - ] && continue
		[ -f "$SAMPLES_DIR/$f" ] || { fail "$name: needs $f, not built"; continue; }
		# The plugin is the unmarked one: that is the point of plugin-host.
		if "$ELFINFO" "$SAMPLES_DIR/$f" | grep -q ' feature=0x[0-9a-f]*[2367abef] '; then
			fail "$name: $f is marked SHSTK, the sample needs it unmarked"
		fi
	done

	# No shadow stack here: every sample must complete, compatible or not.
	for how in plain preload; do
		rc=0
		if [ $how = plain ]; then
			"$exe" >"$tmp/out" 2>&1 || rc=$?
		else
			# No allowlist: the preload must change nothing.
			SHSTK_ALLOWLIST=$tmp/none SHSTK_EVENTS_SOCKET=$tmp/no-daemon LD_PRELOAD=$PRELOAD_LIB \
				"$exe" >"$tmp/out" 2>&1 || rc=$?
		fi
		sed 's/^/    /' "$tmp/out"
		if [ $rc != 0 ]; then
			fail "$name ($how): exit $rc"
		elif ! grep -q "^SAMPLE $name: done.*, shstk=off " "$tmp/out"; then
			fail "$name ($how): no 'SAMPLE $name: done ... shstk=off' line"
		else
			echo "ok: $name ($how) ran to completion"
		fi
	done
done <"$tmp/m.tsv"

# The static view: marking, risks and verdict as the manifest says.
python3 - "$SAMPLES_MANIFEST" "$tmp" <<'PY' || fails=$((fails + 1))
import json, os, sys
m = json.load(open(sys.argv[1]))
ok = True
for s in m["samples"]:
    path = os.path.join(sys.argv[2], "explain-%s.json" % s["name"])
    try:
        e = json.load(open(path))
    except (OSError, ValueError) as err:
        print("FAIL: %s: no explain output: %s" % (s["name"], err))
        ok = False
        continue
    got_risks = sorted(r["kind"] for r in e["risks"])
    # The manifest's verdict is Debian 12's (unmarked ld.so/libc); with every
    # object of the closure marked, the scan has nothing against any sample.
    closure_marked = all(o["marking"] and "SHSTK" in o["marking"] for o in e["closure"])
    want_static = "eligible" if closure_marked else s["static"]
    for what, got, want in (("marking", e["marking"], s["marking"]), ("risks", got_risks, sorted(s["risks"])),
                            ("verdict", e["verdict"], want_static)):
        if got != want:
            print("FAIL: %s: explain %s %r, manifest says %r" % (s["name"], what, got, want))
            ok = False
        else:
            print("ok: %s: static %s %r" % (s["name"], what, got))
sys.exit(0 if ok else 1)
PY

if [ "$fails" != 0 ]; then
	echo "$fails failure(s)"
	exit 1
fi
echo "all samples as the manifest says"
