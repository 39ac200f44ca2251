# SPDX-License-Identifier: GPL-2.0-or-later
# Runtime workload pypy-continulet: PyPy's built-in stack switching.
# _continuation.continulet (stacklet underneath: it copies C stack slices and
# swaps rsp, the stack-switch sample's technique) drives a generator, and
# PyPy's greenlet module (lib_pypy/greenlet.py, built on continulets) plays
# ping-pong.  Each switch is a change of native stack that a shadow stack
# does not know about.
# Prints one line: "RUNTIME pypy-continulet: ok switches=N sum=N pingpong=N shstk=on|off".
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
    from _continuation import continulet
    import greenlet
except ImportError as e:
    print("RUNTIME pypy-continulet: FAILED %s" % e)
    sys.exit(1)

switches = 0


def producer(c, n):
    global switches
    for i in range(n):
        switches += 1
        c.switch(i)
    return -1


gen = continulet(producer, 200)
total = 0
while gen.is_pending():
    v = gen.switch()
    if v == -1:
        break
    total += v

log = []


def ping():
    for i in range(50):
        log.append("ping")
        g_pong.switch()


def pong():
    for i in range(50):
        log.append("pong")
        g_ping.switch()


g_ping = greenlet.greenlet(ping)
g_pong = greenlet.greenlet(pong)
g_ping.switch()
pingpong = len(log)
if total != sum(range(200)) or pingpong < 100:
    print("RUNTIME pypy-continulet: FAILED sum=%d pingpong=%d" % (total, pingpong))
    sys.exit(1)
print("RUNTIME pypy-continulet: ok switches=%d sum=%d pingpong=%d %s" % (switches, total, pingpong, shstk()))
