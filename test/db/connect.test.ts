import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CONNECT_DEFAULTS, connect } from '../../src/db/connect.js';
import { ConnectError, ValidationError } from '../../src/db/errors.js';
import { migrate } from '../../src/db/migrations.js';
import { listQueued, listRunning, listSessionEvents } from '../../src/db/sessionQueries.js';
import { claim } from '../../src/db/sessionTransitions.js';
import { getTask } from '../../src/db/tasks.js';
import { getUserCaps, setUserCap } from '../../src/db/userCaps.js';
import { enqueue, steppingClock } from './fixtures.js';

describe('connect', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('defaults to a persistent PGlite directory, not memory', () => {
    expect(CONNECT_DEFAULTS.dataDir).toBe('./.roundtable/pgdata');
  });

  it('keeps every row of a PGlite directory across close and reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'roundtable-pgdata-'));
    dirs.push(dir);
    const now = steppingClock();
    const first = await connect({ dataDir: dir });
    expect(first.engine).toBe('pglite');
    await migrate(first.db);
    const { task, session } = await enqueue(first.db, 'alice', now());
    const queued = (await enqueue(first.db, 'bob', now())).session;
    await claim(first.db, { sessionId: session.id, epoch: 0, owner: 'node-a', now: now() });
    await setUserCap(first.db, { userId: 'alice', maxRunning: 2, now: now() });
    const events = await listSessionEvents(first.db, session.id);
    await first.close();
    await first.close();

    const again = await connect({ dataDir: dir });
    try {
      expect(await migrate(again.db)).toMatchObject({ applied: [] });
      expect(await getTask(again.db, task.id)).toEqual(task);
      expect((await listRunning(again.db)).map((s) => [s.id, s.owner, s.epoch])).toEqual([
        [session.id, 'node-a', 1],
      ]);
      expect((await listQueued(again.db)).map((s) => s.id)).toEqual([queued.id]);
      expect(await listSessionEvents(again.db, session.id)).toEqual(events);
      expect(await getUserCaps(again.db)).toEqual(new Map([['alice', 2]]));
    } finally {
      await again.close();
    }
  });

  it('rejects an unknown option, suggesting the near one', async () => {
    const err = await connect({ databaseURL: 'x' } as never).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).field).toBe('databaseURL');
    expect((err as Error).message).toMatch(/did you mean databaseUrl/);
  });

  it('reports an unreachable server as ConnectError with the cause', async () => {
    const err = await connect({
      databaseUrl: 'postgres://postgres@127.0.0.1:1/postgres',
      connectTimeoutMs: 2000,
    }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe('DB_CONNECT');
    expect((err as ConnectError).cause).toBeInstanceOf(Error);
  });
});
