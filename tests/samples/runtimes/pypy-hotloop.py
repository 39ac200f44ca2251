# SPDX-License-Identifier: GPL-2.0-or-later
# Runtime workload pypy-hotloop: a hot loop PyPy's tracing JIT compiles to
# machine code (written into executable memory, then entered and left through
# its own trampolines).  Evidence that the JIT really compiled it, not only
# that the loop ran: pypyjit's compile hook counts the loops and bridges the
# JIT emitted, and get_stats_asmmemmgr() shows the bytes of machine code in use.
# Prints one line: "RUNTIME pypy-hotloop: ok result=... loops=N bridges=N asm_used=N shstk=on|off".
# (or "RUNTIME pypy-hotloop: FAILED ..." and exit 1).
import sys


def shstk():
    """'shstk=on|off': does this thread run with a shadow stack (the kernel's view)?"""
    try:
        with open("/proc/thread-self/status") as f:
            for line in f:
                if line.startswith("x86_Thread_features:"):
                    return "shstk=on" if "shstk" in line.split()[1:] else "shstk=off"
    except OSError:
        pass
    return "shstk=off"

try:
    import pypyjit
except ImportError:
    print("RUNTIME pypy-hotloop: FAILED not PyPy (no pypyjit module)")
    sys.exit(1)

compiled = {"loop": 0, "bridge": 0, "entry_bridge": 0}


def on_compile(info):
    compiled[info.type] = compiled.get(info.type, 0) + 1


pypyjit.set_compile_hook(on_compile)


def hot(n):
    s = 0
    for i in range(n):
        s += i * i % 7
        if i % 1000 == 999:  # a rarely taken branch: a guard that becomes a bridge
            s -= 1
    return s


result = hot(300000)
want = sum(i * i % 7 for i in range(300000)) - 300
allocated, used = pypyjit.get_stats_asmmemmgr()
loops = compiled["loop"] + compiled["entry_bridge"]
if result != want or loops == 0 or used == 0:
    print("RUNTIME pypy-hotloop: FAILED result=%d want=%d loops=%d asm_used=%d" % (result, want, loops, used))
    sys.exit(1)
print("RUNTIME pypy-hotloop: ok result=%d loops=%d bridges=%d asm_used=%d %s" % (result, loops, compiled["bridge"], used, shstk()))
