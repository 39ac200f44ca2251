#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Sets up and runs every test of shstk-policy, then prints
#   N passed, N failed, N skipped
# as its last line.  Exit status 0 only when nothing failed.
#
# Phases:
#   1. packages (apt-get, as root)
#   2. the patched kernel (cached under $SHSTK_CACHE, default /var/cache/shstk-policy)
#   3. the emulators and the other cached inputs (scripts/ci-prepare.d/), which
#      some host tests read too (the CET glibc)
#   4. host tests in a build matrix: {gcc, clang} x {plain, ASan+UBSan}, -Werror
#      (suite unit in all four, integration in gcc and clang-asan, kernel in
#      gcc, fuzz in clang)
#   5. the emulator lanes (QEMU TCG and Bochs 3.0 CET emulation), two at a
#      time: each emulator is single-threaded
#   6. the newcomer lane (tests/newcomer/run): main.sh and test.sh --list in
#      a fresh minbase Debian 12 root
# Every step prints its start time and what it took; the summary lists them.
#
#   ./scripts/test.sh          all of it
#   ./scripts/test.sh --list   phase 1 only, then configure a build, check
#                              that every test's prerequisite is there
#                              (tests/check-deps) and list the tests; exit 0
#                              only when nothing is missing
#
# Environment: SHSTK_CACHE (cache dir), SHSTK_TEST_QUICK=1 (one build, no
# kernel/emulator/newcomer phases: for development only, CI never sets it).
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
export SHSTK_CACHE="${SHSTK_CACHE:-/var/cache/shstk-policy}"
# the emulator lanes keep their serial logs here (kept by CI as artifacts)
art="$top/test-artifacts"
rm -rf "$art"
mkdir -p "$art"
export SHSTK_ARTIFACTS="$art/emu"
logs=""
extra_pass=0 extra_fail=0 extra_skip=0

t_start=$(date +%s)
t_step=$t_start
step_times=""
# A new step: what the previous one took goes into the summary's table.
step() {
	now=$(date +%s)
	[ -n "${step_name:-}" ] && step_times="$step_times$(printf '%6d s  %s' $((now - t_step)) "$step_name")
"
	step_name=$*
	t_step=$now
	printf '\n==== %s ==== (%s, +%d s)\n' "$*" "$(date -u +%H:%M:%S)" $((now - t_start))
}

# Counts a non-meson step (a build the later tests need) as a test of its own.
run_step() {
	name=$1
	shift
	step "$name"
	"$@" >"$art/$name.log" 2>&1
	rc=$?
	tail -n 25 "$art/$name.log"
	if [ $rc -eq 0 ]; then
		extra_pass=$((extra_pass + 1)); echo "PASS: $name"
	elif [ $rc -eq 77 ]; then
		extra_skip=$((extra_skip + 1)); echo "SKIP: $name"
	else
		extra_fail=$((extra_fail + 1)); echo "FAIL: $name (exit $rc, log $art/$name.log)"
	fi
	return $rc
}

step "packages"
./scripts/install-deps.sh test || { echo "0 passed, 1 failed"; exit 1; }

if [ "${1:-}" = --list ]; then
	dir="$top/build-test-list"
	step "configure $dir"
	rm -rf "$dir"
	meson setup "$dir" >"$art/setup-list.log" 2>&1 || {
		tail -n 40 "$art/setup-list.log"
		echo "0 passed, 1 failed"
		exit 1
	}
	step "prerequisites of every test"
	rc=0
	tests/check-deps "$dir" || rc=1
	meson test -C "$dir" --list >"$art/list.txt" 2>"$art/list.err" || rc=1
	cat "$art/list.txt"
	echo "test.sh: $(grep -c '^shstk-policy:' "$art/list.txt") tests registered (the gcc build; test.sh runs them in 4 builds, plus the emulator and newcomer lanes)"
	[ $rc = 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
	exit $rc
fi

# name compiler sanitize suites...
matrix_build() {
	name=$1 compiler=$2 sanitize=$3
	shift 3
	dir="$top/build-test-$name"
	step "build $name ($compiler, sanitize=$sanitize)"
	rm -rf "$dir"
	if ! CC=$compiler meson setup "$dir" -Dwerror=true -Db_sanitize="$sanitize" \
		-Db_lundef=$([ "$sanitize" = none ] && echo true || echo false) \
		$([ "$compiler" = clang ] && echo -Dfuzz=true) >"$art/setup-$name.log" 2>&1 ||
	   ! meson compile -C "$dir" >"$art/compile-$name.log" 2>&1; then
		tail -n 40 "$art/setup-$name.log" "$art/compile-$name.log" 2>/dev/null
		extra_fail=$((extra_fail + 1))
		echo "FAIL: build $name"
		return 1
	fi
	extra_pass=$((extra_pass + 1))
	suites=""
	for s in "$@"; do suites="$suites --suite $s"; done
	# shellcheck disable=SC2086
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C "$dir" --print-errorlogs --num-processes 2 $suites
	cp "$dir/meson-logs/testlog.json" "$art/testlog-$name.json" 2>/dev/null &&
		logs="$logs $art/testlog-$name.json"
}

# The cached inputs first: the emulator lanes need them, and so do some unit
# and integration tests (the CET glibc: test_libc_info, test_deps,
# test_libc.sh), which on a cold cache would otherwise run before it exists.
# None of these steps needs a build of the project.
if [ "${SHSTK_TEST_QUICK:-0}" != 1 ]; then
	if [ -x kernel-patches/build ]; then
		run_step kernel-build kernel-patches/build
	fi
	if [ -x tests/emu/setup ]; then
		run_step emulators tests/emu/setup
	fi
	# Further cached inputs of the emulator lanes (a second kernel, guest
	# images): each executable here is one step, run in name order, its
	# output in test-artifacts/<name>.log.
	for prep in scripts/ci-prepare.d/*; do
		[ -x "$prep" ] || continue
		run_step "$(basename "$prep")" "$prep"
	done
fi

matrix_build gcc gcc none unit integration kernel
if [ "${SHSTK_TEST_QUICK:-0}" != 1 ]; then
	# The integration suite runs in two builds, plain gcc and clang with
	# ASan+UBSan; the other two build everything with -Werror and run the
	# unit tests (gcc's sanitizers) and the fuzzers (clang) (issue 28: the
	# cold run's budget)
	matrix_build gcc-asan gcc address,undefined unit
	matrix_build clang clang none unit fuzz
	matrix_build clang-asan clang address,undefined unit integration

	if [ -f tests/emu/meson.build ]; then
		step "emulator lanes"
		# the host tests' log must not pass for the lanes' when meson
		# writes none (a lane's dependency failing to build: exit 125)
		rm -f "$top/build-test-gcc/meson-logs/testlog.json"
		meson test -C "$top/build-test-gcc" --print-errorlogs --num-processes 2 --suite emu
		rc=$?
		if cp "$top/build-test-gcc/meson-logs/testlog.json" "$art/testlog-emu.json" 2>/dev/null; then
			logs="$logs $art/testlog-emu.json"
		elif [ $rc != 0 ]; then
			extra_fail=$((extra_fail + 1))
			echo "FAIL: emulator lanes: meson test exit $rc and no test log"
		fi
	fi
fi

# The newcomer lane: the README's two commands in a Debian 12 nobody prepared.
if [ "${SHSTK_TEST_QUICK:-0}" != 1 ]; then
	run_step newcomer tests/newcomer/run
fi

step "summary"
printf 'Time per step (%d s in all):\n%s' $(($(date +%s) - t_start)) "$step_times"
# A host test that cannot run on this machine says "SKIP: ... covered by lane
# NAME" (e.g. preload-abi-exec on a kernel without IA32 emulation): a skip
# when that lane passed, a failure when it failed or did not run.
python3 - "$extra_pass" "$extra_fail" "$extra_skip" $logs <<'PY'
import json, re, sys
p, f, s = (int(x) for x in sys.argv[1:4])
rows = []
for path in sys.argv[4:]:
    with open(path) as fh:
        rows += [(path.split("testlog-")[-1][:-5], json.loads(line)) for line in fh]
lanes = {r["name"].split(" / ")[-1]: r.get("result") for b, r in rows if b == "emu"}
for build, r in rows:
    res = r.get("result")
    if res in ("OK", "EXPECTEDFAIL"):
        p += 1
    elif res == "SKIP":
        s += 1
        m = re.search(r"covered by lane (\S+)", r.get("stdout") or "")
        if m:
            # a skip stands only for a lane that passed; else it is a failure
            lane = lanes.get(m.group(1), "not run")
            if lane != "OK":
                s -= 1
                f += 1
                print("FAILED:", build, r.get("name"), "SKIP covered by lane %s, which did not pass: %s" % (m.group(1), lane))
                continue
            print("SKIP:", build, r.get("name"), "(covered by lane %s: OK)" % m.group(1))
        else:
            print("SKIP:", build, r.get("name"))
    else:
        f += 1
        print("FAILED:", build, r.get("name"), res)
print(f"{p} passed, {f} failed, {s} skipped")
sys.exit(1 if f else 0)
PY
