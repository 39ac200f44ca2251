-- SPDX-License-Identifier: GPL-2.0-or-later
-- Runtime workload luajit-trace: a hot loop LuaJIT's trace compiler turns
-- into machine code (a root trace, plus a side trace for a rarely taken
-- branch).  Evidence that it really compiled: jit.attach counts the traces
-- the JIT finished ("stop" events), and jit.util.traceinfo(1) shows trace 1
-- exists with its IR and machine-code size.
-- Prints one line: "RUNTIME luajit-trace: ok result=N traces=N mcode=N shstk=on|off".
-- "shstk=on|off": does this thread run with a shadow stack (the kernel's view)?
local function shstk()
  local f = io.open("/proc/thread-self/status")
  if not f then return "shstk=off" end
  local s = f:read("*a")
  f:close()
  local feat = s:match("x86_Thread_features:%s*([^\n]*)") or ""
  return (" " .. feat .. " "):find(" shstk ") and "shstk=on" or "shstk=off"
end

local jit = require("jit")
local util = require("jit.util")

if not jit.status() then
  print("RUNTIME luajit-trace: FAILED the JIT is off")
  os.exit(1)
end
local traces = 0
jit.attach(function(what) if what == "stop" then traces = traces + 1 end end, "trace")

local function hot(n)
  local s = 0
  for i = 1, n do
    s = (s + i * i) % 1000003
    if i % 1000 == 0 then s = s + 1 end -- a side exit that becomes a side trace
  end
  return s
end

local result = hot(300000)
jit.attach(function() end) -- detach
local want = 0
jit.off()
for i = 1, 300000 do
  want = (want + i * i) % 1000003
  if i % 1000 == 0 then want = want + 1 end
end
local info = util.traceinfo(1)
local mcode = 0
if info then
  local mc = util.tracemc(1) -- the trace's machine code, as a string
  mcode = mc and #mc or 0
end
if result ~= want or traces == 0 or not info or mcode == 0 then
  print(string.format("RUNTIME luajit-trace: FAILED result=%d want=%d traces=%d", result, want, traces))
  os.exit(1)
end
print(string.format("RUNTIME luajit-trace: ok result=%d traces=%d mcode=%d %s", result, traces, mcode, shstk()))
