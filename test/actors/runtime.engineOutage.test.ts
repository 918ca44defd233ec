/**
 * A container-engine outage keeps the queue queued (issue 14, item 6), on the
 * public harness (virtual clock, simulated Swarm, PGlite):
 * - with the engine API down, the starts that were granted fail
 *   `unavailable`, close the node's engine gate (`health().engine`) and are
 *   re-queued at the head of their user's line, the card saying why; the node
 *   takes no grants while the gate is closed, so no attempt is burnt; once the
 *   API answers, the probe opens the gate and everything completes, once;
 * - a session whose start can never succeed (the engine answers pings but no
 *   node can take a container) ends failed, recoverable, after
 *   START_FAILURE_DEFAULTS.maxAttempts attempts spaced by the policy's backoff;
 * - an image the engine refuses fails its task at once with the engine's
 *   reason, not recoverable, without closing the gate.
 */
import { expect, test } from 'vitest';
import type { RuntimeCard } from '../../src/actors/runtimeTypes.js';
import type { Session } from '../../src/db/index.js';
import {
  START_FAILURE_DEFAULTS,
  startRetryDelayMs,
} from '../../src/machines/startFailurePolicy.js';
import type { TestRuntime } from '../../src/testing/index.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

const runtimes = pgliteRuntimes();
let h: TestRuntime;

const agent = (title: string, seconds = 30, image = 'runner:v1') => ({
  title,
  image,
  command: ['agent', String(seconds), '0', title],
});
const cardOf = (t: TestRuntime, taskId: string): RuntimeCard => {
  const card = t.board().find((c) => c.taskId === taskId);
  if (card === undefined) throw new Error(`no card for ${taskId}`);
  return card;
};
const byTask = (sessions: Session[], taskId: string) =>
  sessions.filter((s) => s.taskId === taskId).sort((a, b) => a.attempt - b.attempt);

test('engine API down: granted starts are re-queued at the head of their line, the rest stay queued, the probe resumes everything', async () => {
  h = await runtimes.open({ caps: { maxRunning: 4, defaultUserCap: 2 } });
  const outageEnds = h.clock.now() + 30_000;
  h.cluster.failApi(outageEnds);
  expect(h.runtime.health().engine).toBe('available');

  const tasks: { taskId: string; user: string; title: string }[] = [];
  for (const [user, title] of [
    ['alice', 'a1'],
    ['alice', 'a2'],
    ['alice', 'a3'],
    ['bob', 'b1'],
    ['bob', 'b2'],
  ] as const) {
    const { taskId } = await h.runtime.createTask(user, agent(title));
    tasks.push({ taskId, user, title });
  }
  await h.settle();

  // The first grants failed to start: the gate is closed, nothing failed.
  expect(h.runtime.health().engine).toBe('unavailable');
  let sessions = await h.sessions();
  const firstFailed = sessions.filter((s) => s.status === 'failed');
  expect(firstFailed.length).toBeGreaterThanOrEqual(1);
  for (const s of firstFailed) {
    expect(s).toMatchObject({ attempt: 1, userRecoverable: true });
    expect(s.failureReason).toMatch(/^engine_unavailable/);
  }
  for (const t of tasks) {
    const card = cardOf(h, t.taskId);
    expect(card.column, t.title).toBe('queued');
    expect(card.status, t.title).toBe('queued');
    const latest = byTask(sessions, t.taskId).at(-1) as Session;
    expect(latest.status).toBe('queued');
    if (latest.attempt > 1) {
      expect(card.previous?.attempt).toBe(1);
      expect(card.previous?.reason).toMatch(/^engine_unavailable/);
    }
  }
  // The granted starts (alice's a1, and a2 when its grant left before the
  // gate closed: her cap is 2) went back to the head of her line, before
  // every attempt still waiting since it was enqueued (a3 always).
  const cards = tasks.map((t) => ({ user: t.user, card: cardOf(h as TestRuntime, t.taskId) }));
  const [a1, , a3] = cards.map((c) => c.card);
  expect(a1?.attempt).toBe(2);
  expect(a3?.attempt).toBe(1);
  const pos = (c: RuntimeCard | undefined) => c?.queued?.position ?? Number.NaN;
  for (const back of cards.filter((c) => c.card.attempt === 2))
    for (const waiting of cards.filter((c) => c.user === back.user && c.card.attempt === 1))
      expect(pos(back.card)).toBeLessThan(pos(waiting.card));

  // The whole outage: the gate stays closed, no grant, no attempt burnt.
  const attemptsBefore = sessions.length;
  await h.advance(outageEnds - h.clock.now() - 1);
  expect(h.runtime.health().engine).toBe('unavailable');
  sessions = await h.sessions();
  expect(sessions).toHaveLength(attemptsBefore);
  expect(sessions.filter((s) => s.status === 'running')).toEqual([]);
  expect(tasks.every((t) => cardOf(h as TestRuntime, t.taskId).column === 'queued')).toBe(true);
  expect(h.cluster.execLog()).toEqual([]);

  // The API answers: within the probe's capped backoff (5 s) the gate opens.
  await h.advance(5_001);
  expect(h.runtime.health().engine).toBe('available');
  expect(h.runtime.health().holding).toBe(4);
  await h.advance(120_000);
  sessions = await h.sessions();
  for (const t of tasks) {
    const card = cardOf(h, t.taskId);
    expect(card.column, t.title).toBe('done');
    expect(byTask(sessions, t.taskId).at(-1)?.status).toBe('succeeded');
    expect(
      h.cluster.execLog().filter((e) => e.command.includes(t.title)),
      t.title,
    ).toHaveLength(1);
  }
  expect(sessions.length).toBe(attemptsBefore);
  expect(h.runtime.metrics().restartsTotal).toBe(0);
});

test('a start that can never succeed ends failed, recoverable, at the attempt limit, retried with the policy backoff', async () => {
  h = await runtimes.open({ caps: { maxRunning: 4, defaultUserCap: 2 } });
  // The engine answers pings, but no node can take a container.
  for (const node of h.cluster.nodeNames()) h.cluster.killNode(node);
  const { taskId } = await h.runtime.createTask('carol', agent('never'));
  const max = START_FAILURE_DEFAULTS.maxAttempts;
  // 1 + 2 + 4 + 8 + 16 + 30 + 30 s between the attempts, and some slack.
  let total = 0;
  for (let a = 1; a < max; a++) total += startRetryDelayMs(a);
  await h.advance(total + 30_000);

  const attempts = byTask(await h.sessions(), taskId);
  expect(attempts).toHaveLength(max);
  const last = attempts.at(-1) as Session;
  expect(last).toMatchObject({ attempt: max, status: 'failed', userRecoverable: true });
  expect(last.failureReason).toBe(`engine_unavailable after ${max} attempts: no node is up`);
  for (const s of attempts.slice(0, -1)) {
    expect(s).toMatchObject({
      status: 'failed',
      failureReason: 'engine_unavailable',
      userRecoverable: true,
    });
  }
  // Spaced by the documented backoff (docs/containers.md), not by the probe alone.
  for (let a = 1; a < max; a++) {
    const gap =
      (attempts[a]?.claimedAt?.getTime() ?? 0) - (attempts[a - 1]?.finishedAt?.getTime() ?? 0);
    expect(gap, `after attempt ${a}`).toBeGreaterThanOrEqual(startRetryDelayMs(a));
  }
  const card = cardOf(h, taskId);
  expect(card).toMatchObject({
    column: 'failed',
    attempt: max,
    failure: { reason: last.failureReason, recoverable: true },
  });
  expect(card.previous).toMatchObject({ attempt: max - 1, reason: 'engine_unavailable' });
  expect(h.cluster.execLog()).toEqual([]);
});

test('an image the engine refuses fails at once with its reason, not recoverable, and leaves the gate open', async () => {
  h = await runtimes.open({ caps: { maxRunning: 4, defaultUserCap: 2 } });
  h.cluster.rejectImage('bad:image');
  const bad = await h.runtime.createTask('dave', agent('bad', 30, 'bad:image'));
  const good = await h.runtime.createTask('dave', agent('good', 30));
  const other = await h.runtime.createTask('erin', agent('other', 30));
  await h.settle();

  const sessions = await h.sessions();
  const badRows = byTask(sessions, bad.taskId);
  expect(badRows).toHaveLength(1);
  expect(badRows[0]).toMatchObject({
    status: 'failed',
    failureReason: 'start_rejected: No such image: bad:image',
    userRecoverable: false,
  });
  expect(cardOf(h, bad.taskId)).toMatchObject({
    column: 'failed',
    attempt: 1,
    failure: { reason: 'start_rejected: No such image: bad:image', recoverable: false },
  });
  // Not the engine's fault: the gate stays open and the others run.
  expect(h.runtime.health().engine).toBe('available');
  expect(cardOf(h, good.taskId).column).toBe('running');
  expect(cardOf(h, other.taskId).column).toBe('running');
  // The refused service was removed again: nothing left to sweep.
  expect(h.cluster.serviceOf(bad.sessionId)).toBeUndefined();

  await h.advance(60_000);
  expect(cardOf(h, good.taskId).column).toBe('done');
  expect(cardOf(h, other.taskId).column).toBe('done');
  expect(byTask(await h.sessions(), bad.taskId)).toHaveLength(1);
  expect(h.cluster.execLog().filter((e) => e.command.includes('bad'))).toEqual([]);
});
