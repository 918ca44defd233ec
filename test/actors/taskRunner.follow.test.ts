/**
 * Live output after adoption, with real local processes: a node starts a
 * run, stops, and the next boot adopts it; the adopted run's card shows the
 * lines written before the restart and then each line as it is written,
 * not only at the end, and ends with its whole output once, no line twice.
 * The command waits on gate files the test creates, so each line is known
 * to come after the card showed the one before (no sleeps as synchronization).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, expect, it } from 'vitest';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import type { BoardCard } from '../../src/board/boardPort.js';
import { LocalBackend } from '../../src/containers/local/LocalBackend.js';
import { parseLocalHandle } from '../../src/containers/local/localHandle.js';
import type { Db } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { until } from '../containers/local/localFixture.js';
import { describeEachEngine } from '../support/databases.js';

const dir = mkdtempSync(join(tmpdir(), 'rt-follow-adopt-'));
const started: Array<{ runtime: Runtime; backend: LocalBackend }> = [];
const pids: number[] = [];
afterEach(async () => {
  for (const n of started.splice(0)) {
    await n.runtime.stop().catch(() => undefined);
    n.backend.close();
  }
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function node(db: Db, name: string) {
  const backend = new LocalBackend({ baseDir: join(dir, 'runs') });
  const errors: unknown[] = [];
  const runtime = await createRuntime({
    db,
    backend,
    clock: systemClock,
    nodeId: name,
    pollMs: 200,
    onError: (e) => errors.push(e),
  });
  started.push({ runtime, backend });
  await runtime.booted;
  return { runtime, backend, errors };
}

const card = (r: Runtime, taskId: string): BoardCard | undefined =>
  r.cards(null).find((c) => c.taskId === taskId);
const shows = (r: Runtime, taskId: string, lines: string[]) => () =>
  JSON.stringify(card(r, taskId)?.lastOutput) === JSON.stringify(lines) ? true : undefined;

describeEachEngine('an adopted local run’s live output', (getDb) => {
  it('the next boot’s card shows the lines so far, then each as it comes, then all of them once', async () => {
    const { db } = getDb();
    const gate = (name: string) => join(dir, `${name}-${Math.random().toString(36).slice(2)}`);
    const [a, b] = [gate('a'), gate('b')];
    const wait = (path: string) => `while [ ! -e ${path} ]; do sleep 0.02; done`;
    const first = await node(db, 'follow1');
    const { taskId, sessionId } = await first.runtime.createTask('alice', {
      title: 'gated',
      image: 'host',
      command: ['sh', '-c', `echo one; ${wait(a)}; echo two; ${wait(b)}; echo three`],
    });
    await until(shows(first.runtime, taskId, ['one']), 20_000);
    const handle = await until(async () => {
      const row = await db
        .selectFrom('sessions')
        .select('handle')
        .where('id', '=', sessionId)
        .executeTakeFirst();
      return row?.handle ?? undefined;
    }, 10_000);
    const pid = parseLocalHandle(handle)?.pid;
    if (pid !== undefined) pids.push(pid);
    await first.runtime.stop();
    first.backend.close();

    const second = await node(db, 'follow2');
    expect(second.runtime.liveRunners()).toEqual([sessionId]);
    // Before anything more was written: the card has what the file held.
    await until(shows(second.runtime, taskId, ['one']), 10_000);
    writeFileSync(a, '');
    await until(shows(second.runtime, taskId, ['one', 'two']), 10_000);
    expect(card(second.runtime, taskId)?.status).toBe('running');
    writeFileSync(b, '');
    await until(
      () => (card(second.runtime, taskId)?.status === 'succeeded' ? true : undefined),
      20_000,
    );
    expect(card(second.runtime, taskId)?.lastOutput).toEqual(['one', 'two', 'three']);
    const stored = await second.runtime.taskOutput(null, taskId, sessionId);
    expect(stored).toMatchObject({ text: 'one\ntwo\nthree\n' });
    expect(second.errors).toEqual([]);
  });
});
