#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Installs the Debian 12 packages shstk-policy needs to build, scan and test.
# Usage: scripts/install-deps.sh [build|test]   (default: build)
# "build" is enough for the main job; "test" adds the kernel, emulator and
# fuzzing toolchain, and chromium, the browser that renders the HTML report
# in tests/integration/test_report_browser.sh, and debuginfod (the server
# and debuginfod-find; it brings libdebuginfod1, which libdw loads) for
# tests/integration/test_symbols.sh, and systemd-journal-remote (its
# systemd-journal-remote and systemd-journal-upload carry the fleet test's
# journal entries between simulated machines, tests/integration/test_fleet.sh),
# and auditd: its version is the audit source kernel-patches/audit-userspace/
# build patches and builds (dpkg-dev unpacks it; no other build dependency:
# libcap-ng is configured out), whose ausearch lane bochs-records reads the
# kernel's real records with, and its own ausearch is the unpatched control
# of tests/kernel/test_audit_userspace.sh; iproute2 and
# openssl, the network namespaces and keys of the fleet test (not in a
# minbase Debian 12: tests/newcomer found them missing).
# libdw-dev: the symboliser
# (engine/symbols.c) is built on libdwfl.  Safe to run again: apt-get
# skips what is installed.
set -eu
what=${1:-build}

build_pkgs="build-essential meson ninja-build pkg-config libelf-dev libdw-dev libsqlite3-dev
libsystemd-dev librpm-dev libarchive-dev libinih-dev libcmocka-dev python3"
test_pkgs="clang lld llvm libclang-rt-14-dev gcc-multilib pax-utils python3-pyelftools binutils file
linux-source-6.12 bc flex bison libssl-dev cpio kmod
qemu-system-x86 bochsbios vgabios busybox-static isolinux syslinux-common xorriso
rpm sqlite3 g++ make xz-utils dpkg-dev strace debootstrap e2fsprogs git
perl patch
man-db groff-base
chromium
pypy3 luajit nodejs
debuginfod
systemd-journal-remote iproute2 openssl
auditd"

pkgs=$build_pkgs
[ "$what" = test ] && pkgs="$build_pkgs $test_pkgs"

missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "install-deps: all $(echo $pkgs | wc -w) packages present"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "install-deps: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "install-deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing
