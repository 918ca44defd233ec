// @ts-check
// The smallest program that uses roundtable as a library: a store in memory
// (PGlite), jobs run as local processes, two jobs to the end. Plain Node, no
// build step, no TypeScript: `node first-jobs.mjs` in an app that ran
// `npm install roundtable`. docs/library.md walks through it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, createRuntime, LocalBackend, migrate } from 'roundtable';
import { createBoardStore } from 'roundtable/client';
import { decide } from 'roundtable/machines';
import { systemClock } from 'roundtable/supervisor';
import { TestClock } from 'roundtable/testing';

const store = await connect({ dataDir: 'memory://' });
await migrate(store.db);
// Local runs keep their files (output, exit marker) here, so a restarted app can adopt them.
const runs = mkdtempSync(join(tmpdir(), 'first-jobs-'));
const runtime = await createRuntime({ db: store.db, backend: new LocalBackend({ baseDir: runs }) });

/**
 * Resolves with the card once the task has finished, one way or the other.
 * @param {string} taskId
 * @returns {Promise<import('roundtable').RuntimeCard>}
 */
function finished(taskId) {
  /** @param {import('roundtable').RuntimeCard} card */
  const over = (card) =>
    card.taskId === taskId && (card.column === 'done' || card.column === 'failed');
  return new Promise((resolve) => {
    const stop = runtime.subscribe((card) => {
      if (over(card)) {
        stop();
        resolve(card);
      }
    });
    const now = runtime.cards(null).find(over);
    if (now) {
      stop();
      resolve(now);
    }
  });
}

const jobs = await Promise.all([
  runtime.submit('ann', { title: 'greet', image: 'local', command: ['echo', 'hello'] }),
  runtime.submit('ann', {
    title: 'count',
    image: 'local',
    command: ['sh', '-c', 'echo 1; echo 2'],
  }),
]);
const finishing = jobs.map((j) => finished(j.task.id));
// performance.now() counts from the process's start: module loading included.
let firstMs = 0;
void Promise.race(finishing).then(() => {
  firstMs = Math.round(performance.now());
});
const timeout = AbortSignal.timeout(120_000);
/** @type {Promise<never>} */
const late = new Promise((_, reject) =>
  timeout.addEventListener('abort', () => reject(timeout.reason)),
);
const cards = await Promise.race([Promise.all(finishing), late]);
const bothMs = Math.round(performance.now());
for (const card of cards) {
  const output = await runtime.sessionOutput('ann', card.sessionId);
  console.log(
    `${card.title}: ${card.column}, exit ${card.exitCode}, output ${JSON.stringify(output?.text)}`,
  );
}
await runtime.stop();
await store.close();
rmSync(runs, { recursive: true, force: true });

// The other entry points load and work without a runtime.
const board = createBoardStore();
const verdict = decide('2026-01-01T00:01:00Z', '2026-01-01T00:00:00Z', 0, 1000);
const clocks = [systemClock.now() > 0, new TestClock(0).now() === 0];
console.log(
  `entry points: client ${typeof board.send}, machines ${verdict.kind}, clocks ${clocks}`,
);
console.log(`first job done ${firstMs} ms after the process started, both ${bothMs} ms`);
if (cards.some((c) => c.column !== 'done')) process.exitCode = 1;
