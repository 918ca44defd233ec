/**
 * The ceiling: how many single-row INSERT commits per second this Postgres
 * server takes from pgbench, with a custom script of one INSERT. A queue
 * needs at least one commit per job, so no queue on this server can beat it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { createScratch, dropScratch } from './scratchDb.js';

const run = promisify(execFile);

export interface PgbenchResult {
  clients: number;
  seconds: number;
  insertsPerSecond: number;
  command: string;
}

export function pgbenchPath(): string {
  for (const p of ['/usr/lib/postgresql/15/bin/pgbench', '/usr/bin/pgbench']) {
    if (existsSync(p)) return p;
  }
  return 'pgbench';
}

/** The one statement of the pgbench script. */
export const SCRIPT_TEXT = `insert into ceiling (payload) values ('{"k":"x"}');\n`;

/** Runs pgbench once per client count against a fresh table. */
export async function pgbenchCeiling(
  clientCounts: readonly number[],
  seconds: number,
): Promise<PgbenchResult[]> {
  const db = 'peers_pgbench';
  const url = await createScratch(db);
  const dir = mkdtempSync(join(tmpdir(), 'peers-pgbench-'));
  try {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    await c.query(
      'create table ceiling (id bigserial primary key, payload jsonb not null, created_at timestamptz not null default now())',
    );
    await c.end();
    const script = join(dir, 'insert.sql');
    writeFileSync(script, SCRIPT_TEXT);
    const out: PgbenchResult[] = [];
    for (const clients of clientCounts) {
      const args = [
        '-n',
        '-M',
        'prepared',
        '-f',
        script,
        '-c',
        String(clients),
        '-j',
        String(Math.min(clients, 2)),
        '-T',
        String(seconds),
        url,
      ];
      const { stdout } = await run(pgbenchPath(), args, { timeout: (seconds + 30) * 1000 });
      const m = /tps = ([\d.]+) \(without initial connection time\)/.exec(stdout);
      if (m === null) throw new Error(`pgbench output without a tps line:\n${stdout}`);
      out.push({
        clients,
        seconds,
        insertsPerSecond: Number(m[1]),
        command: `pgbench ${args.slice(0, -1).join(' ').replace(script, 'insert.sql')} <db>`,
      });
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await dropScratch(db);
  }
}
