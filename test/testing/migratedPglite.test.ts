/**
 * `migratedPglite`: a new in-memory PGlite with the schema, loaded from a
 * template (a dump of a migrated data directory) kept in the temp dir.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { PGlite } from '@electric-sql/pglite';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import { MIGRATIONS } from '../../src/db/migrations.js';
import { createTestRuntime } from '../../src/testing/index.js';
import * as mod from '../../src/testing/migratedPglite.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/testing/migratedPglite.ts', import.meta.url), mod);

const opened: PGlite[] = [];
afterAll(async () => {
  for (const p of opened) await p.close();
});
const open = async () => {
  const p = await mod.migratedPglite();
  opened.push(p);
  return p;
};
const migrations = async (p: PGlite) => {
  const h = await connect({ pglite: p });
  try {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM schema_migrations`.execute(
      h.db,
    );
    return Number(rows[0]?.n);
  } finally {
    await h.close();
  }
};

describe('migratedPglite', () => {
  it('gives instances with every migration applied, each its own database', async () => {
    const [a, b] = [await open(), await open()];
    expect(await migrations(a)).toBe(MIGRATIONS.length);
    expect(await migrations(b)).toBe(MIGRATIONS.length);
    await a.exec(
      `INSERT INTO user_caps (user_id, max_running, updated_at) VALUES ('only-a', 1, now())`,
    );
    const inB = await b.query<{ n: number }>(`SELECT count(*)::int AS n FROM user_caps`);
    expect(inB.rows[0]?.n).toBe(0);
  });

  it('keeps its template in the temp dir, one per migration list and PGlite build', async () => {
    await open();
    expect(existsSync(mod.templatePath())).toBe(true);
    expect(mod.templatePath().startsWith(tmpdir())).toBe(true);
    // The key tells apart what would make a template stale.
    expect(mod.templateKey('1:2', MIGRATIONS)).not.toBe(mod.templateKey('1:3', MIGRATIONS));
    expect(mod.templateKey('1:2', MIGRATIONS)).not.toBe(
      mod.templateKey('1:2', MIGRATIONS.slice(0, -1)),
    );
    expect(mod.templateKey('1:2', MIGRATIONS)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('is what a harness given no store opens, and it runs a task', async () => {
    const h = await createTestRuntime({ caps: { maxRunning: 2, defaultUserCap: 1 } });
    try {
      const created = await h.runtime.createTask('ann', {
        title: 'echo',
        image: 'sim',
        command: ['echo', 'hi'],
      });
      await h.advance(1_000);
      const s = (await h.sessions()).find((x) => x.taskId === created.taskId);
      expect(s?.status).toBe('succeeded');
    } finally {
      await h.close();
    }
  });
});
