/**
 * The dispatch tick of this checkout against a baseline commit, side by
 * side on the Postgres server: each side has its own scratch database,
 * migrated and ticked by its own `src/db` (the baseline from a detached
 * worktree, bench/sides.ts), and the rounds alternate between the sides,
 * so both see the same machine load. On this shared 2-core machine runs of
 * different hours differ by more than most changes
 * (docs/dispatch-measurements.md): a change to the tick is measured here,
 * not by comparing reports.
 *
 * Cases, each shaped as the runtime sends them (100 users, cap 1, global
 * cap B):
 * - **steady**: every tick carries the handles and finishes of the B runs
 *   the previous tick granted (a short job's handle and finish ride one
 *   tick, as in the peers bench) and asks for B grants;
 * - **enqueue**: ticks of 500 enqueues, asking for nothing (a burst of
 *   submissions).
 *
 * Per side and case: the server's time inside `rt_tick` per tick
 * (`pg_stat_user_functions`, stats flushed before each read), the round
 * trip as the client sees it, and the reply's size. Medians over rounds.
 *
 * Knobs: TICKAB_BASELINE (a git ref; without it, this checkout alone),
 * TICKAB_ROUNDS (5), TICKAB_TICKS (100 steady ticks per round; enqueue
 * rounds send 10), TICKAB_BATCH (B, 20), PEERS_DB_TAG (appended to the
 * scratch databases' names, as in bench/peers).
 */
import { loadavg } from 'node:os';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { createScratch, dropScratch, trackFunctions } from '../peers/scratchDb.js';
import { baselineSide, currentSide, type Side } from '../sides.js';
import { median, positiveIntEnv, writeResults } from '../stats.js';
import { shortRunOps } from '../tickOps.js';

const ROUNDS = positiveIntEnv('TICKAB_ROUNDS', 5);
const TICKS = positiveIntEnv('TICKAB_TICKS', 100);
const B = positiveIntEnv('TICKAB_BATCH', 20);
const ENQUEUE_TICKS = 10;
const ENQUEUE_BATCH = 500;
const USERS = 100;
const TAG = process.env.PEERS_DB_TAG;

type Op = object;
interface Held {
  id: string;
  epoch: number;
}
interface Sample {
  serverMs: number;
  roundTripMs: number;
  replyKb: number;
}
type CaseName = 'steady' | 'enqueue';

/** One side: its own database and its own `src/db` code. */
interface Runner {
  side: Side;
  db: string;
  client: pg.Client;
  /** One tick; returns its round trip and the reply's length. */
  tick(ops: Op[], want: number): Promise<{ ms: number; chars: number; granted: Held[] }>;
  serverMs(): Promise<number>;
  held: Held[];
  n: number;
  samples: Record<CaseName, Sample[]>;
}

const log = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

async function runner(side: Side, label: string): Promise<Runner> {
  const from = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(`${side.root}/${path}`).href)) as T;
  const { connect, migrate } = await from<{
    connect(o: object): Promise<{ db: unknown; close(): Promise<void> }>;
    migrate(db: unknown): Promise<unknown>;
  }>('src/db/index.ts');
  const { tickPayload } = await from<{ tickPayload(input: object): object }>('src/db/tickInput.ts');
  const db = `tickab_${label}${TAG ? `_${TAG}` : ''}`;
  const url = await createScratch(db);
  await trackFunctions(db);
  const h = await connect({ databaseUrl: url });
  await migrate(h.db);
  await h.close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const r: Runner = {
    side,
    db,
    client,
    held: [],
    n: 0,
    samples: { steady: [], enqueue: [] },
    async tick(ops, want) {
      const payload = tickPayload({
        owner: 'tickab@bench',
        now: new Date(),
        globalCap: B,
        defaultUserCap: 1,
        want,
        ops,
      });
      const t0 = performance.now();
      const res = await client.query<{ r: string }>('SELECT rt_tick($1::jsonb)::text AS r', [
        JSON.stringify(payload),
      ]);
      const ms = performance.now() - t0;
      const text = res.rows[0]?.r ?? '';
      const reply = JSON.parse(text) as { granted: Array<{ session: unknown }> };
      // Rows as arrays (src/db/sql/rowJson.ts): id first, epoch twelfth.
      const granted = reply.granted.map((g) => {
        const s = g.session as unknown[];
        return { id: String(s[0]), epoch: Number(s[11]) };
      });
      return { ms, chars: text.length, granted };
    },
    async serverMs() {
      // Function statistics reach the shared view when the backend flushes
      // them (at a transaction's end, at most once a second unless forced).
      await client.query('SELECT pg_stat_force_next_flush()');
      await client.query('SELECT 1');
      await client.query('SELECT pg_stat_clear_snapshot()');
      const res = await client.query<{ t: number }>(
        "SELECT coalesce(sum(total_time), 0)::float8 AS t FROM pg_stat_user_functions WHERE funcname = 'rt_tick'",
      );
      return Number(res.rows[0]?.t ?? 0);
    },
  };
  return r;
}

function enqueueOp(r: Runner): Op {
  r.n += 1;
  const hex = (k: string) =>
    `${k}${r.n.toString(16).padStart(8, '0')}${'0'.repeat(24)}`.slice(0, 36);
  return {
    op: 'enqueue',
    ref: `e${r.n}`,
    taskId: hex('tsk_'),
    sessionId: hex('ses_'),
    userId: `user-${r.n % USERS}`,
    title: `job ${r.n}`,
    spec: { image: 'bench', command: ['bench', String(r.n)] },
  };
}

async function steadyTick(r: Runner) {
  const t = await r.tick(
    r.held.flatMap((s) => shortRunOps(s, ++r.n)),
    B,
  );
  r.held = t.granted;
  return t;
}

async function round(r: Runner, c: CaseName): Promise<void> {
  const ticks = c === 'steady' ? TICKS : ENQUEUE_TICKS;
  const step =
    c === 'steady'
      ? () => steadyTick(r)
      : () =>
          r.tick(
            Array.from({ length: ENQUEUE_BATCH }, () => enqueueOp(r)),
            0,
          );
  if (c === 'steady') for (let i = 0; i < 10; i++) await step();
  const s0 = await r.serverMs();
  let ms = 0;
  let chars = 0;
  for (let i = 0; i < ticks; i++) {
    const t = await step();
    ms += t.ms;
    chars += t.chars;
  }
  r.samples[c].push({
    serverMs: ((await r.serverMs()) - s0) / ticks,
    roundTripMs: ms / ticks,
    replyKb: chars / ticks / 1024,
  });
}

const fmt = (v: number) => v.toFixed(2);
const cell = (xs: readonly number[]) =>
  `${fmt(median(xs))} (${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))})`;

export async function run(): Promise<void> {
  const current = currentSide();
  const base = process.env.TICKAB_BASELINE;
  const sides = base ? [baselineSide(base, 'tickab'), current] : [current];
  const load0 = loadavg()[0] ?? 0;
  const runners: Runner[] = [];
  try {
    for (const [i, side] of sides.entries()) {
      log(`side ${side.name}: migrating, filling the queue`);
      const r = await runner(side, i === 0 && base ? 'base' : 'this');
      // Enough queued work for every steady round, in ticks of 500.
      const need = ROUNDS * (TICKS + 10) * B + 10 * B;
      for (let k = 0; k < need; k += ENQUEUE_BATCH)
        await r.tick(
          Array.from({ length: ENQUEUE_BATCH }, () => enqueueOp(r)),
          0,
        );
      runners.push(r);
    }
    for (let k = 0; k < ROUNDS; k++) {
      for (const c of ['steady', 'enqueue'] as const) {
        for (const r of runners) {
          await round(r, c);
          const s = r.samples[c].at(-1);
          if (s)
            log(
              `round ${k + 1} ${c} ${r.side.name}: server ${fmt(s.serverMs)} ms/tick, round trip ${fmt(s.roundTripMs)}, reply ${fmt(s.replyKb)} KB`,
            );
        }
      }
    }
  } finally {
    for (const r of runners) {
      await r.client.end().catch(() => {});
      await dropScratch(r.db).catch(() => {});
    }
  }
  const jobs: Record<CaseName, number> = { steady: B, enqueue: ENQUEUE_BATCH };
  const rows = (['steady', 'enqueue'] as const).flatMap((c) =>
    runners.map((r) => {
      const xs = r.samples[c];
      const server = xs.map((x) => x.serverMs);
      return `| ${c} | ${r.side.name} | ${cell(server)} | ${fmt((median(server) * 1000) / jobs[c])} | ${cell(xs.map((x) => x.roundTripMs))} | ${fmt(median(xs.map((x) => x.replyKb)))} |`;
    }),
  );
  const ratios =
    runners.length === 2
      ? (['steady', 'enqueue'] as const).map((c) => {
          const [a, b] = runners.map((r) => median(r.samples[c].map((x) => x.serverMs)));
          return `- ${c}: this checkout's server time per tick is ${fmt((b ?? 0) / (a ?? 1))}x the baseline's.`;
        })
      : [];
  const md = [
    '# The tick, side by side (Postgres server)',
    '',
    'Generated by `npm run bench -- tickAb` (bench/suites/tickAb.bench.ts; what is measured is in its header).',
    `${ROUNDS} rounds alternating between the sides; steady: ${TICKS} ticks of ${B} runs' handles and finishes plus ${B} grants; enqueue: ${ENQUEUE_TICKS} ticks of ${ENQUEUE_BATCH} enqueues. Medians over the rounds, range in brackets.`,
    '',
    '| case | side | server ms per tick | server µs per job | round trip ms | reply KB per tick |',
    '|---|---|---:|---:|---:|---:|',
    ...rows,
    '',
    ...ratios,
    '',
    `Load average (1 min) at start / end: ${load0.toFixed(1)} / ${(loadavg()[0] ?? 0).toFixed(1)}, on 2 shared cores.`,
  ].join('\n');
  writeResults('tickAb', { sides: runners.map((r) => ({ side: r.side, samples: r.samples })) }, md);
  log(md);
}
