// SPDX-License-Identifier: GPL-2.0-or-later
// Runtime workload node-deopt: a hot function V8 optimizes (TurboFan), then
// two deoptimizations: a LAZY one of a function that is on the stack (V8
// redirects the optimized frame's return address to its deoptimizer
// trampoline: the jit-deopt sample's pattern) and an EAGER one by a type
// change (a guard fails inside the optimized code).  Runs with
// --allow-natives-syntax, so the optimization status is read from V8 itself
// (%GetOptimizationStatus, bit 4 = optimized) rather than assumed.
// Prints one line: "RUNTIME node-deopt: ok hot=1 lazy=1 eager=1 result=N shstk=on|off".
'use strict';
// The workload's name in its RUNTIME line: the manifest runs this file twice,
// once with V8's defaults and once as node-deopt-noosr (see samples.json).
const NAME = process.argv[2] || 'node-deopt';
// 'shstk=on|off': does the main thread run with a shadow stack (the kernel's view)?
function shstk() {
  try {
    const m = require('fs').readFileSync('/proc/thread-self/status', 'utf8').match(/^x86_Thread_features:\s*(.*)$/m);
    return m && m[1].split(/\s+/).includes('shstk') ? 'shstk=on' : 'shstk=off';
  } catch (e) {
    return 'shstk=off';
  }
}
const OPTIMIZED = 1 << 4;
const optimized = (f) => (%GetOptimizationStatus(f) & OPTIMIZED) !== 0;

function fail(msg) {
  console.log('RUNTIME ' + NAME + ': FAILED ' + msg);
  process.exit(1);
}

// 1. A hot function, optimized.
function hot(a, b) { return a * b + (a ^ b); }
%PrepareFunctionForOptimization(hot);
let acc = 0;
for (let i = 0; i < 1000; i++) acc = (acc + hot(i, 7)) | 0;
%OptimizeFunctionOnNextCall(hot);
acc = (acc + hot(3, 4)) | 0;
if (!optimized(hot)) fail('hot() was not optimized');

// 2. Lazy deopt: outer() is optimized and on the stack when the callee
// invalidates it; outer continues in the interpreter after the call returns.
let deoptNow = false;
function callee(x) {
  if (deoptNow) %DeoptimizeFunction(outer);
  return x + 1;
}
function outer(x) { return callee(x) * 2; }
%PrepareFunctionForOptimization(outer);
%NeverOptimizeFunction(callee);
for (let i = 0; i < 100; i++) outer(i);
%OptimizeFunctionOnNextCall(outer);
outer(1);
if (!optimized(outer)) fail('outer() was not optimized');
deoptNow = true;
const lazyResult = outer(20);
const lazy = !optimized(outer) && lazyResult === 42;
if (!lazy) fail('lazy deopt: result ' + lazyResult + ', optimized ' + optimized(outer));

// 3. Eager deopt: optimized for small integers, then called with a string.
function add(a, b) { return a + b; }
%PrepareFunctionForOptimization(add);
for (let i = 0; i < 100; i++) add(i, 1);
%OptimizeFunctionOnNextCall(add);
add(1, 2);
if (!optimized(add)) fail('add() was not optimized');
const s = add('x', 1);
const eager = s === 'x1' && !optimized(add);
if (!eager) fail('eager deopt: ' + s + ', optimized ' + optimized(add));

console.log('RUNTIME ' + NAME + ': ok hot=1 lazy=1 eager=1 result=' + acc + ' ' + shstk());
