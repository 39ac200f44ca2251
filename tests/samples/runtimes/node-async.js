// SPDX-License-Identifier: GPL-2.0-or-later
// Runtime workload node-async: async functions, promises, timers and
// setImmediate interleaved on libuv's event loop, plus a worker thread (a
// second V8 isolate on its own native thread).  Await resumes generator-like
// frames on V8's heap, not by switching native stacks, so this workload is
// expected to be shadow-stack compatible; whether node 18 itself is, is
// what running it finds out.
// Prints one line: "RUNTIME node-async: ok tasks=N worker=N shstk=on|off".
'use strict';
// 'shstk=on|off': does the main thread run with a shadow stack (the kernel's view)?
function shstk() {
  try {
    const m = require('fs').readFileSync('/proc/thread-self/status', 'utf8').match(/^x86_Thread_features:\s*(.*)$/m);
    return m && m[1].split(/\s+/).includes('shstk') ? 'shstk=on' : 'shstk=off';
  } catch (e) {
    return 'shstk=off';
  }
}
const { Worker } = require('worker_threads');

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const tick = () => new Promise((r) => setImmediate(r));

async function task(id) {
  let v = id;
  for (let i = 0; i < 20; i++) {
    await (i % 5 === 0 ? sleep(1) : tick());
    v = (v * 31 + i) % 100003;
  }
  return v;
}

async function main() {
  const worker = new Promise((resolve, reject) => {
    const w = new Worker('const { parentPort } = require("worker_threads");' +
      'let s = 0; for (let i = 0; i < 100000; i++) s = (s + i * i) % 1000003;' +
      'parentPort.postMessage(s);', { eval: true });
    w.once('message', resolve);
    w.once('error', reject);
  });
  const results = await Promise.all(Array.from({ length: 10 }, (_, i) => task(i)));
  let want = 0;
  for (let i = 0; i < 100000; i++) want = (want + i * i) % 1000003;
  const got = await worker;
  if (results.length !== 10 || got !== want) {
    console.log('RUNTIME node-async: FAILED worker ' + got + ' want ' + want);
    process.exit(1);
  }
  console.log('RUNTIME node-async: ok tasks=' + results.length + ' worker=' + got + ' ' + shstk());
}
main().catch((e) => { console.log('RUNTIME node-async: FAILED ' + e); process.exit(1); });
