-- SPDX-License-Identifier: GPL-2.0-or-later
-- Runtime workload luajit-coroutines: generators and a producer/consumer
-- pipeline with Lua coroutines, and errors raised inside a coroutine and
-- inside pcall (LuaJIT unwinds them with its own VM code and, on x86-64, the
-- system unwinder: a non-local exit, like longjmp).  A LuaJIT coroutine is a
-- separate Lua stack, resumed by a call into the VM on the same C stack, so
-- the switches themselves need no change of native stack; the error paths
-- are the interesting part under a shadow stack.
-- Prints one line: "RUNTIME luajit-coroutines: ok sum=N piped=N errors=N shstk=on|off".
-- "shstk=on|off": does this thread run with a shadow stack (the kernel's view)?
local function shstk()
  local f = io.open("/proc/thread-self/status")
  if not f then return "shstk=off" end
  local s = f:read("*a")
  f:close()
  local feat = s:match("x86_Thread_features:%s*([^\n]*)") or ""
  return (" " .. feat .. " "):find(" shstk ") and "shstk=on" or "shstk=off"
end

local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i) end
  end)
end

local sum = 0
for v in gen(1000) do sum = sum + v end

-- producer -> filter -> consumer
local function producer()
  return coroutine.create(function()
    for i = 1, 500 do coroutine.yield(i) end
  end)
end
local function filter(src)
  return coroutine.create(function()
    while true do
      local ok, v = coroutine.resume(src)
      if not v then return end
      if v % 3 == 0 then coroutine.yield(v * 2) end
    end
  end)
end
local piped = 0
local f = filter(producer())
while true do
  local ok, v = coroutine.resume(f)
  if not ok or not v then break end
  piped = piped + v
end

-- errors: inside a coroutine, and deep inside pcall
local errors = 0
local co = coroutine.create(function() coroutine.yield(1); error("boom") end)
coroutine.resume(co)
local ok, msg = coroutine.resume(co)
if not ok and tostring(msg):find("boom") then errors = errors + 1 end
local function deep(n) if n == 0 then error({ code = 7 }) end return deep(n - 1) + 1 end
for _ = 1, 20 do
  local ok2, e = pcall(deep, 30)
  if not ok2 and type(e) == "table" and e.code == 7 then errors = errors + 1 end
end

local want_piped = 0
for i = 1, 500 do if i % 3 == 0 then want_piped = want_piped + 2 * i end end
if sum ~= 500500 or piped ~= want_piped or errors ~= 21 then
  print(string.format("RUNTIME luajit-coroutines: FAILED sum=%d piped=%d errors=%d", sum, piped, errors))
  os.exit(1)
end
print(string.format("RUNTIME luajit-coroutines: ok sum=%d piped=%d errors=%d %s", sum, piped, errors, shstk()))
