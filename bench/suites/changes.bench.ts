/**
 * What another node's changes cost to send, with and without their tasks'
 * run specs (migration 20): the feed's read of 1,000 changed tasks
 * (`readChanges`, off the lock) and a tick whose reply carries 100 of them
 * (`since`, built inside the lock every node's tick waits for), for a
 * short command and for a coding agent's prompt of 32 KB. "With spec" is
 * what every node read before: the same rows with `run_spec` filled, as an
 * older node still asks for them. Server time is the statement's wall time
 * seen from the node (round trip included), node CPU the process's
 * user + system time over the call, parse included. Then the board's load
 * at boot of every task in the store (the 2,000 above), with the spec
 * (read and checked, as before) and without (`readCardTasks`). Last, a
 * tick whose reply carries 100 finished runs with long outputs, their
 * tails read from the tail stored beside each output (migration 22) and
 * from the text, as every read was before.
 *
 * Server URL: ROUNDTABLE_BENCH_DATABASE_URL, else ROUNDTABLE_TEST_DATABASE_URL,
 * else the local server; a scratch database, dropped after. Medians of 9
 * runs after 2 untimed ones.
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import pg from 'pg';
import { RESTORE_TAIL_CHARS, readCardTasks } from '../../src/actors/runtimeBoardRows.js';
import { connect, type DbHandle } from '../../src/db/connect.js';
import { readChanges } from '../../src/db/dispatchReads.js';
import { newId } from '../../src/db/ids.js';
import { migrate } from '../../src/db/migrations.js';
import { toTask } from '../../src/db/rows.js';
import { changedSessions } from '../../src/db/sql/changesSql.js';
import { OUTPUT_TAIL_CHARS } from '../../src/db/storedTail.js';
import { tick } from '../../src/db/tick.js';
import { tickPayload } from '../../src/db/tickInput.js';
import { changesFromJson } from '../../src/db/tickReply.js';
import type { TickInput, TickOp } from '../../src/db/tickTypes.js';
import { scratchDatabase } from '../serverAdmin.js';
import { median, writeResults } from '../stats.js';

const READ_ROWS = 1_000;
/** RIDE_MAX_CHANGES (src/actors/runtimeFeed.ts): the most a reply carries. */
const RIDE_ROWS = 100;
const RUNS = 9;
const TAIL = 2_000;
const COMMANDS = [
  { name: 'a short command', command: ['sh', '-c', 'make test'] },
  // An argument is at most 8,192 characters (RUN_SPEC_LIMITS): a prompt in four.
  {
    name: 'a 32 KB prompt',
    command: ['agent', ...Array.from({ length: 4 }, () => 'p'.repeat(8_000))],
  },
];

interface Case {
  command: string;
  shape: 'with spec' | 'without spec';
  readMs: number;
  readCpuMs: number;
  readBytes: number;
  tickMs: number;
  tickBytes: number;
}

const head = (owner: string, ops: TickOp[], extra: Partial<TickInput> = {}): TickInput => ({
  owner,
  now: new Date(),
  globalCap: 1,
  defaultUserCap: 1,
  want: 0,
  ops,
  ...extra,
});

/** `n` tasks of one command, enqueued by node A; returns the tick before them. */
async function enqueue(h: DbHandle, command: string[], n: number): Promise<number> {
  const before = (await tick(h.db, head('a@b', []))).tick;
  for (let i = 0; i < n; i += 250) {
    const ops: TickOp[] = Array.from({ length: Math.min(250, n - i) }, (_, k) => ({
      op: 'enqueue',
      ref: `e${i + k}`,
      taskId: newId('task'),
      sessionId: newId('session'),
      userId: `u${(i + k) % 100}`,
      title: `job ${i + k}`,
      spec: { image: 'busybox:1.36', command },
    }));
    await tick(h.db, head('a@b', ops));
  }
  return before;
}

/** The feed's read of everything after `since`, as sent with or without specs. */
async function read(h: DbHandle, since: number, withSpec: boolean) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let rows: number;
  if (withSpec) {
    const q = changedSessions(`${since}::bigint`, null, `${TAIL}::integer`, 'true', null, 'true');
    const { rows: r } = await sql<{ s: unknown }>`SELECT ${sql.raw(q)} AS s`.execute(h.db);
    rows = changesFromJson(r[0]?.s, 'sessions').length;
  } else {
    rows = (await readChanges(h.db, since, { tailChars: TAIL })).sessions.length;
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(c0);
  if (rows !== READ_ROWS) throw new Error(`read ${rows} rows, expected ${READ_ROWS}`);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

async function bytesOf(h: DbHandle, since: number, withSpec: boolean): Promise<number> {
  const q = changedSessions(
    `${since}::bigint`,
    null,
    `${TAIL}::integer`,
    'true',
    null,
    withSpec ? 'true' : 'false',
  );
  const { rows } = await sql<{
    n: number;
  }>`SELECT octet_length((${sql.raw(q)})::text) AS n`.execute(h.db);
  return Number(rows[0]?.n ?? 0);
}

/**
 * Node B's tick, whose reply carries the RIDE_ROWS sessions A changed after
 * `since`, as this node asks (no spec) or an older one (`changes_without_spec`
 * left out). Run in a transaction rolled back, so each run ticks the same state.
 */
async function tickWithChanges(
  client: pg.Client,
  since: number,
  withSpec: boolean,
  tailChars = TAIL,
) {
  const input = head('b@b', [], { since, tailChars });
  const { changes_without_spec: _lean, ...older } = tickPayload(input);
  const payload = withSpec ? older : tickPayload(input);
  await client.query('BEGIN');
  try {
    const t0 = performance.now();
    const r = await client.query<{ n: number }>(
      'SELECT octet_length(rt_tick($1::jsonb)::text) AS n',
      [JSON.stringify(payload)],
    );
    return { ms: performance.now() - t0, bytes: Number(r.rows[0]?.n ?? 0) };
  } finally {
    await client.query('ROLLBACK');
  }
}

/** What a tick's reply carrying RIDE_ROWS finished runs with long outputs costs inside the lock. */
interface OutputRide {
  outputChars: number;
  /** With their stored tails (migration 22), and as rows written before (tails null, read from the text). */
  storedMs: number;
  fromTextMs: number;
  replyKB: number;
}

/**
 * RIDE_ROWS runs of node A finished with `chars` of output each; node B's
 * tick with them riding its reply, asking the board's RESTORE_TAIL_CHARS.
 */
async function outputRide(h: DbHandle, client: pg.Client, chars: number): Promise<OutputRide> {
  const since = await enqueue(h, ['agent'], RIDE_ROWS);
  await sql`UPDATE sessions SET status = 'succeeded', finished_at = now(), exit_code = 0,
    owner_node = 'a@b', epoch = 1, ended_tick = (SELECT tick FROM dispatch_state) + 1
    WHERE status = 'queued' AND queued_tick > ${since}`.execute(h.db);
  await sql`UPDATE dispatch_state SET tick = tick + 1`.execute(h.db);
  const line = "a long line of the agent's log, step ";
  await sql`INSERT INTO session_outputs (session_id, text, total_bytes, truncated, created_at, tail, tail_whole)
    SELECT s.id, x.text, octet_length(x.text), false, now(), right(x.text, ${OUTPUT_TAIL_CHARS}),
      length(x.text) <= ${OUTPUT_TAIL_CHARS}
    FROM sessions s CROSS JOIN LATERAL (SELECT repeat(${line} || s.id || E'\n', ${chars}::int / 80) AS text) x
    WHERE s.status = 'succeeded' AND s.ended_tick > ${since}`.execute(h.db);
  await sql`VACUUM ANALYZE session_outputs`.execute(h.db);
  const time = async () => {
    const ms: number[] = [];
    let bytes = 0;
    for (let run = 0; run < RUNS + 2; run++) {
      const r = await tickWithChanges(client, since, false, RESTORE_TAIL_CHARS);
      if (run >= 2) ms.push(r.ms);
      bytes = r.bytes;
    }
    return { ms: median(ms), bytes };
  };
  const stored = await time();
  await sql`UPDATE session_outputs SET tail = NULL, tail_whole = NULL`.execute(h.db);
  const fromText = await time();
  await sql`DELETE FROM session_outputs`.execute(h.db);
  return {
    outputChars: chars,
    storedMs: stored.ms,
    fromTextMs: fromText.ms,
    replyKB: stored.bytes / 1024,
  };
}

interface BoardLoad {
  tasks: number;
  withSpecMs: number;
  withoutSpecMs: number;
}

/** The board's read of every task at boot, as before (whole rows, each spec checked) and now. */
async function boardLoad(h: DbHandle): Promise<BoardLoad> {
  const before: number[] = [];
  const now: number[] = [];
  let tasks = 0;
  for (let run = 0; run < RUNS + 2; run++) {
    const t0 = performance.now();
    tasks = (await h.db.selectFrom('tasks').selectAll().execute()).map(toTask).length;
    const t1 = performance.now();
    if ((await readCardTasks(h.db)).length !== tasks) throw new Error('board load: counts differ');
    const t2 = performance.now();
    if (run >= 2) {
      before.push(t1 - t0);
      now.push(t2 - t1);
    }
  }
  return { tasks, withSpecMs: median(before), withoutSpecMs: median(now) };
}

async function measure(h: DbHandle, client: pg.Client): Promise<Case[]> {
  await migrate(h.db);
  const out: Case[] = [];
  for (const c of COMMANDS) {
    const readSince = await enqueue(h, c.command, READ_ROWS - RIDE_ROWS);
    const rideSince = await enqueue(h, c.command, RIDE_ROWS);
    for (const withSpec of [true, false]) {
      const reads: { ms: number; cpuMs: number }[] = [];
      const ticks: { ms: number; bytes: number }[] = [];
      for (let run = 0; run < RUNS + 2; run++) {
        const r = await read(h, readSince, withSpec);
        const t = await tickWithChanges(client, rideSince, withSpec);
        if (run >= 2) {
          reads.push(r);
          ticks.push(t);
        }
      }
      const one: Case = {
        command: c.name,
        shape: withSpec ? 'with spec' : 'without spec',
        readMs: median(reads.map((r) => r.ms)),
        readCpuMs: median(reads.map((r) => r.cpuMs)),
        readBytes: await bytesOf(h, readSince, withSpec),
        tickMs: median(ticks.map((t) => t.ms)),
        tickBytes: median(ticks.map((t) => t.bytes)),
      };
      process.stdout.write(
        `${one.command}, ${one.shape}: read ${one.readMs.toFixed(1)} ms (node CPU ${one.readCpuMs.toFixed(1)}), tick ${one.tickMs.toFixed(1)} ms\n`,
      );
      out.push(one);
    }
  }
  return out;
}

export async function run(): Promise<void> {
  const loadStart = loadavg()[0] ?? 0;
  const { url, drop } = await scratchDatabase();
  const h = await connect({ databaseUrl: url, poolMax: 2 });
  const client = new pg.Client({ connectionString: url });
  let cases: Case[];
  let load: BoardLoad;
  let rides: OutputRide[];
  try {
    await client.connect();
    cases = await measure(h, client);
    load = await boardLoad(h);
    rides = [await outputRide(h, client, 100_000), await outputRide(h, client, 1_000_000)];
  } finally {
    await client.end();
    await h.close();
    await drop();
  }
  const loadEnd = loadavg()[0] ?? 0;
  const kb = (b: number) => (b / 1024).toFixed(0);
  const lines = [
    "# changes: other nodes' rows, with and without their run specs",
    '',
    `The feed's read of ${READ_ROWS.toLocaleString('en')} changed tasks (off the lock), and a tick whose reply`,
    `carries ${RIDE_ROWS} of them (inside the lock every node's tick waits for). "with spec": as every`,
    'node read them before migration 20, and as an older node still asks. Medians of',
    `${RUNS} runs on the Postgres server; the read's time includes the node's parse.`,
    '',
    '| command | rows as | read: ms | read: node CPU ms | read: KB | tick: ms | tick reply: KB |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...cases.map(
      (c) =>
        `| ${c.command} | ${c.shape} | ${c.readMs.toFixed(1)} | ${c.readCpuMs.toFixed(1)} | ${kb(c.readBytes)} | ${c.tickMs.toFixed(1)} | ${kb(c.tickBytes)} |`,
    ),
    '',
    `Load average ${loadStart.toFixed(2)} at the start, ${loadEnd.toFixed(2)} at the end.`,
  ];
  lines.push(
    '',
    '## Board load',
    '',
    `The board's read of every task at boot (${load.tasks.toLocaleString('en')} tasks, half of them with the 32 KB prompt):`,
    `${load.withSpecMs.toFixed(1)} ms with the spec read and checked (before), ${load.withoutSpecMs.toFixed(1)} ms without (\`readCardTasks\`).`,
  );
  lines.push(
    '',
    '## Output tails',
    '',
    `A tick whose reply carries ${RIDE_ROWS} finished runs, each with a long stored output, and their`,
    `tails of ${RESTORE_TAIL_CHARS.toLocaleString('en')} characters (what the board asks): read from the tail stored beside the`,
    'output (migration 22), and from the text itself (rows written before, as every read was).',
    `Medians of ${RUNS} runs, inside the lock every node's tick waits for:`,
    '',
    '| output of each run | stored tail: ms | from the text: ms | reply: KB |',
    '|---:|---:|---:|---:|',
    ...rides.map(
      (r) =>
        `| ${(r.outputChars / 1000).toLocaleString('en')} K chars | ${r.storedMs.toFixed(1)} | ${r.fromTextMs.toFixed(1)} | ${r.replyKB.toFixed(0)} |`,
    ),
  );
  writeResults('changes', { cases, load, rides, loadStart, loadEnd }, lines.join('\n'));
}
