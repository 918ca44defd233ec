/**
 * `roundtable cancel` on the rows (src/cli/commands/cancel.ts) when another
 * node's grant comes between the command's read of the attempt and its
 * tick: the read said queued, the row is running by the time the cancel's
 * compare-and-set runs. The cancel must follow the row (cancelFollowing)
 * and end the run, not answer "moved on; try again" and leave it running.
 *
 * The interleaving is forced, not hoped for: `latestAttempt` is wrapped so
 * that, right after the command's real read, a tick of "another node"
 * grants the row on the same store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { runCli } from '../../../src/cli/runCli.js';
import { type Db, tick } from '../../../src/db/index.js';
import { capture } from '../cliCapture.js';

/** Set by the test: what another node does right after the command reads the row. */
let afterRead: ((db: Db) => Promise<void>) | null = null;

vi.mock('../../../src/cli/latestAttempt.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../../src/cli/latestAttempt.js')>();
  return {
    latestAttempt: async (db: Db, taskId: string) => {
      const read = await real.latestAttempt(db, taskId);
      const meanwhile = afterRead;
      afterRead = null;
      if (meanwhile !== null) await meanwhile(db);
      return read;
    },
  };
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-cli-cancel-race-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = capture();
  const code = await runCli([args[0] ?? '', '--data-dir', dir, ...args.slice(1)], c.io);
  return { code, out: c.out(), err: c.err() };
}

it('a queued attempt granted elsewhere between the read and the tick is cancelled all the same', async () => {
  const queued = await cli('enqueue', '--json', '--user', 'ann', '--', 'sleep', '600');
  expect(queued.code, queued.err).toBe(0);
  const taskId: string = JSON.parse(queued.out).taskId;

  let granted: string[] = [];
  afterRead = async (db) => {
    const reply = await tick(db, {
      owner: 'node-x@boot-1',
      now: new Date(),
      globalCap: 100,
      defaultUserCap: 100,
      want: 100,
      ops: [],
    });
    granted = reply.granted.map((g) => g.task?.id ?? g.session.taskId);
  };

  const r = await cli('cancel', taskId, '--json');
  // The grant really came between the two: the read saw the row queued.
  expect(granted).toContain(taskId);
  expect(r.code, r.err).toBe(0);
  expect(JSON.parse(r.out)).toMatchObject({
    taskId,
    cancelled: true,
    via: 'rows',
    // It followed the row to running: the run's container is its business
    // (none recorded yet by the granting node), not a queued slot's.
    container: { kind: 'none', why: expect.stringContaining('no container recorded yet') },
  });
  const shown = await cli('show', taskId, '--json');
  expect(JSON.parse(shown.out).attempts).toMatchObject([{ status: 'cancelled', position: null }]);
}, 90_000);
