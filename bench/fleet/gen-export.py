#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Journal export streams of simulated machines, as shstkd writes fleet entries.

Writes the journal export format (systemd.io/JOURNAL_EXPORT_FORMAT) that
systemd-journal-remote reads from a file or an HTTP upload: per machine a
_MACHINE_ID, _HOSTNAME, _BOOT_ID and the trusted _UID=0 shstkd's entries
carry, then run-end entries (clean or not) and, for the builds told to,
confirmed violations, and per machine a decision-change entry for each
build it ran clean (its own state, --local-state: a collector counts a
machine clean only when that says verified); the field names and
MESSAGE_IDs are engine/fleet.h's.  Of --entries-per-machine, up to a third
are decision entries.
Deterministic for a seed.  Used by tests/integration/test_fleet.sh and
bench/fleet/run.

Usage: gen-export.py --machines N --entries-per-machine E [--builds B]
       [--identity build-id:HEX ...] [--violating build-id:HEX ...]
       [--violating-machines K] [--host-prefix P] [--seed S] [--first M]
       [--local-state verified|auditing] [--keys-file F [--key-seed S]]

With --keys-file, every machine gets a key (derived from --key-seed and its
machine id), its "MACHINE-ID KEY HOST" line is appended to F (a collector's
machine_keys), and every entry carries SHSTK_MAC= as shstkd signs it
(engine/fleet.h, "Entry authentication").
"""
import argparse
import hashlib
import hmac
import random
import sys

MID_RUN = "4b3b4a93b1e54aa9b19e4c55efedf345"
MID_VIOLATION = "7571215c8ddc42c68c60e9edc8d42e9e"
MID_DECISION = "1c07f0c5e5204ffba4cb0c51b7224541"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--machines", type=int, required=True)
    ap.add_argument("--entries-per-machine", type=int, required=True)
    ap.add_argument("--builds", type=int, default=1000, help="distinct builds when no --identity is given")
    ap.add_argument("--identity", action="append", default=[], help="the builds the machines run")
    ap.add_argument("--violating", action="append", default=[], help="builds that violate")
    ap.add_argument("--violating-machines", type=int, default=1, help="on how many machines each violates")
    ap.add_argument("--host-prefix", default="sim")
    ap.add_argument("--first", type=int, default=0, help="number of the first machine")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--local-state", default="verified", choices=["verified", "auditing"],
                    help="what each machine decided about the builds it ran clean")
    ap.add_argument("--keys-file", help="append the machines' key lines here and sign their entries")
    ap.add_argument("--key-seed", default="shstk-test", help="what the machines' keys derive from")
    ap.add_argument("--time", type=int, default=1796400000000000, help="realtime of the first entry (us)")
    a = ap.parse_args()

    rnd = random.Random(a.seed)
    ids = a.identity or ["build-id:%040x" % rnd.getrandbits(160) for _ in range(a.builds)]
    out = sys.stdout
    keys = open(a.keys_file, "a") if a.keys_file else None
    state = {"key": None, "mid": None}

    def w(text):
        """One entry (ending in a blank line), signed with the current machine's key if there is one."""
        if state["key"] is not None:
            lines = text[:-1].split("\n")[:-1]
            cov = sorted(l for l in lines if (l.startswith("MESSAGE_ID=") or l.startswith("SHSTK_"))
                         and not l.startswith("SHSTK_MAC="))
            msg = "shstk-fleet-mac-v1\n_MACHINE_ID=" + state["mid"] + "\n" + "".join(l + "\n" for l in cov)
            mac = hmac.new(state["key"], msg.encode(), hashlib.sha256).hexdigest()
            text = text[:-1] + "SHSTK_MAC=" + mac + "\n\n"
        out.write(text)
    t = a.time
    for m in range(a.first, a.first + a.machines):
        mid = "%032x" % (0x5e000000000000000000000000000000 + m)
        boot = "%032x" % (0xb0000000000000000000000000000000 + m)
        host = "%s-%05d" % (a.host_prefix, m)
        if keys:
            state["key"] = hashlib.sha256((a.key_seed + mid).encode()).digest()
            state["mid"] = mid
            keys.write("%s %s %s\n" % (mid, state["key"].hex(), host))
        head = "_MACHINE_ID=%s\n_HOSTNAME=%s\n_BOOT_ID=%s\n_UID=0\n_GID=0\n_COMM=shstkd\n_TRANSPORT=journal\nSHSTK_FLEET=1\n" % (
            mid, host, boot)
        mono = 1000000
        violate = [v for i, v in enumerate(a.violating) if (m - a.first - i) % max(a.machines, 1) < a.violating_machines]
        decided = []  # builds this machine ran clean, in order: one decision entry each
        e = 0
        while e + len(decided) < a.entries_per_machine:
            t += 7
            mono += 7
            if e < len(violate):
                ident = violate[e]
                w("__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n%sMESSAGE_ID=%s\nPRIORITY=4\n"
                  "MESSAGE=shstk confirmed violation: %s (near ret)\nSHSTK_IDENTITY=%s\nSHSTK_BUILD_ID=%s\n"
                  "SHSTK_PACKAGE=pkg%d\nSHSTK_PACKAGE_VERSION=1.%d-1\nSHSTK_VIOLATION=%d\nSHSTK_TIME_US=%d\n"
                  "SHSTK_GRADE=confirmed\nSHSTK_SOURCES=1\nSHSTK_MODE=audit\nSHSTK_ACTION=continued\n"
                  "SHSTK_KIND=near ret\n\n"
                  % (t, mono, head, MID_VIOLATION, ident, ident, ident[9:], e, e % 3, e + 1, t))
                e += 1
                continue
            ident = ids[rnd.randrange(len(ids))]
            clean = ident not in a.violating
            w("__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n%sMESSAGE_ID=%s\nPRIORITY=6\n"
              "MESSAGE=shstk run ended %s: %s (mode audit)\nSHSTK_IDENTITY=%s\nSHSTK_BUILD_ID=%s\n"
              "SHSTK_PACKAGE_VERSION=1.0-1\nSHSTK_RUN=%d\nSHSTK_STARTED_US=%d\nSHSTK_ENDED_US=%d\n"
              "SHSTK_MODE=audit\nSHSTK_SOURCE=preload\nSHSTK_EXIT_STATUS=0\nSHSTK_EXIT_SIGNAL=0\n"
              "SHSTK_VIOLATIONS=0\nSHSTK_CLEAN=%d\n\n"
              % (t, mono, head, MID_RUN, "clean" if clean else "not clean", ident, ident, ident[9:], e + 1,
                 t - 5000, t, 1 if clean else 0))
            e += 1
            if (clean and ident not in decided and len(decided) < a.entries_per_machine // 3
                    and e + len(decided) + 1 <= a.entries_per_machine):
                decided.append(ident)
        decision = "enforce" if a.local_state == "verified" else "audit"
        for ident in decided:
            t += 7
            mono += 7
            w("__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n%sMESSAGE_ID=%s\nPRIORITY=6\n"
              "MESSAGE=shstk decision: %s candidate -> %s\nSHSTK_IDENTITY=%s\nSHSTK_BUILD_ID=%s\n"
              "SHSTK_PACKAGE_VERSION=1.0-1\nSHSTK_TIME_US=%d\nSHSTK_STATE=%s\nSHSTK_DECISION=%s\n"
              "SHSTK_OLD_STATE=candidate\nSHSTK_OLD_DECISION=audit\nSHSTK_BY=local\n\n"
              % (t, mono, head, MID_DECISION, ident, a.local_state, ident, ident[9:], t, a.local_state, decision))


if __name__ == "__main__":
    main()
