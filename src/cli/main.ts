#!/usr/bin/env node
/**
 * The `roundtable` executable: the real process behind `runCli`. `npm start`
 * runs `roundtable start` through tsx; `scripts/build.ts` bundles this file
 * to `dist/roundtable.js`.
 */
import { readConfigText } from './readConfigText.js';
import { runCli } from './runCli.js';

const signals = ['SIGINT', 'SIGTERM'] as const;

const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: { write: (t) => void process.stdout.write(t), isTTY: process.stdout.isTTY === true },
  stderr: { write: (t) => void process.stderr.write(t), isTTY: process.stderr.isTTY === true },
  readFile: (path) => readConfigText(path),
  onSignal(handler) {
    const listeners = signals.map((s) => [s, () => handler(s)] as const);
    for (const [s, l] of listeners) process.on(s, l);
    return () => {
      for (const [s, l] of listeners) process.off(s, l);
    };
  },
  exit: (c) => process.exit(c),
});
process.exitCode = code;
// Late copies of the Ctrl-C that stopped us (npm and tsx pass it on) must not
// turn a clean stop into a death by signal.
for (const s of signals) process.on(s, () => {});
// Everything this process opened is closed by now; a handle someone else
// leaked (a timer in a library) must not keep a stopped node around. Reached
// only when something still holds the loop: it says what, for a bug report.
setTimeout(() => {
  process.stderr.write(
    `roundtable: still open 2 s after the command ended, exiting anyway: ${process.getActiveResourcesInfo().join(', ')}\n`,
  );
  process.exit(code);
}, 2_000).unref();
