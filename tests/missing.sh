#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Stands in for a test whose prerequisite meson did not find at configure
# time: the test is still registered, and fails saying what is missing.
#   missing.sh WHAT HOW
echo "missing: $1 ($2)"
exit 1
