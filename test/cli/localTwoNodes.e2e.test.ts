/**
 * Two `roundtable start` processes on the local backend, each with its own
 * data directory, on one database of the Postgres server: node A runs a
 * command, A is SIGKILLed mid-run, and node B, which finds the run's files
 * under A's data directory (its handle names them) and its process alive on
 * this machine, adopts it instead of judging it absent and running it again.
 * The command counts its own starts: it ran once.
 *
 * Skipped without ROUNDTABLE_TEST_DATABASE_URL, failed with CI=true. Real
 * processes, so real time: every wait is bounded.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseLocalHandle } from '../../src/containers/local/localHandle.js';
import { isAlive, until } from '../containers/local/localFixture.js';
import {
  adoptedRunSucceeds,
  countsItsStarts,
  createTaskOver,
  describeWithServer,
  STOP_MS,
  serverSkipNote,
  transition,
  twoLocalNodes,
} from './e2eCluster.js';

const nodes = twoLocalNodes('rt_local_two', ['local-a', 'local-b']);

describeWithServer(
  `two local nodes with their own data directories, one SIGKILLed mid-run${serverSkipNote}`,
  () => {
    it('the other node adopts the run from the dead node’s directory; the command ran once', async () => {
      const { cluster, a, b } = nodes;
      const first = await cluster.startReady(a);
      const gate = join(cluster.dir, 'go');
      const starts = join(cluster.dir, 'starts');
      const task = await createTaskOver(a, 'ann', {
        title: 'counts itself',
        image: 'alpine:3.20',
        command: countsItsStarts(starts, gate),
      });
      await first.waitFor(transition('running', task.taskId), 30_000, 'the run started on A');
      await until(() => (existsSync(starts) ? true : undefined), 30_000);
      const handle = await until(async () => {
        const rows = await cluster.query<{ handle: string | null }>(
          'SELECT handle FROM sessions WHERE id = $1',
          [task.sessionId],
        );
        return rows[0]?.handle ?? undefined;
      }, 30_000);
      const h = parseLocalHandle(handle);
      expect(h?.dir).toBe(join(a.dataDir, 'runs', 'default'));
      const ownerA = await cluster.latestOwner(a);

      const second = await cluster.startReady(b);
      first.signal('SIGKILL');
      await first.exitCode(STOP_MS);
      expect(isAlive(h!.pid)).toBe(true);

      // B adopts (fences the row to its own boot) while the run still waits for its gate.
      const ownerB = await cluster.latestOwner(b);
      await until(async () => {
        const rows = await cluster.query<{ owner_node: string; status: string }>(
          'SELECT owner_node, status FROM sessions WHERE id = $1',
          [task.sessionId],
        );
        return rows[0]?.owner_node === ownerB ? rows[0] : undefined;
      }, 60_000);
      writeFileSync(gate, '');
      await adoptedRunSucceeds(second, task.taskId);

      expect(readFileSync(starts, 'utf8')).toBe('start\n');
      const sessions = await cluster.query<{ id: string; status: string; owner_node: string }>(
        'SELECT id, status, owner_node FROM sessions WHERE task_id = $1',
        [task.taskId],
      );
      expect(sessions).toEqual([{ id: task.sessionId, status: 'succeeded', owner_node: ownerB }]);
      expect(ownerB).not.toBe(ownerA);
      const output = await cluster.query<{ text: string }>(
        'SELECT text FROM session_outputs WHERE session_id = $1',
        [task.sessionId],
      );
      expect(output[0]?.text).toBe('step 1\nstep 2\n');
      // Removed where it was: under A's data directory.
      expect(existsSync(join(a.dataDir, 'runs', 'default', task.sessionId))).toBe(false);
    }, 300_000);
  },
);
