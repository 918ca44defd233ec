/**
 * The node's `board` log tells the board's story. A run whose container was
 * replaced (Swarm rescheduled it) is given up and its next attempt queued at
 * the head of its user's line; with a slot free it gets a runner in the same
 * tick, so the card goes from running (attempt 1) to running (attempt 2).
 * On a real Swarm the JSON log then said nothing at all between `c1: new →
 * running` and `c1: running → succeeded` (attempt 2): an operator reading the
 * logs never learned that the container was replaced, nor why the task ran
 * again. A new attempt is a change of the card, and its record says why.
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { expect, test } from 'vitest';
import { logCards } from '../../src/cli/nodeLogs.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();

test('a run re-queued and granted again in one tick is logged, with the attempt and why', async () => {
  const h = await runtimes.open({ pollMs: 1_000 });
  const records: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  logCards(h.runtime, { logger: pino({ base: null }, sink) });
  const { sessionId } = await h.runtime.createTask('alice', {
    title: 'job',
    image: 'runner:v1',
    command: ['agent', '600'],
  });
  await h.advance(2_000);
  h.cluster.reschedule(sessionId);
  await h.advance(10_000);
  const card = h.runtime.cards(null).find((c) => c.title === 'job');
  expect(card).toMatchObject({ attempt: 2, status: 'running' });
  const second = records.filter((r) => r.attempt === 2);
  expect(second).toHaveLength(1);
  expect(second[0]).toMatchObject({
    component: 'board',
    previous: { attempt: 1, reason: 'container_replaced' },
    msg: 'job: running → running (attempt 2 after container_replaced)',
  });
});
