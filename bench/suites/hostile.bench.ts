/**
 * The control client's latency under each attack of issue 14, on the
 * default limits and the system clock: one server, a 400-card board of the
 * attacking user (alice), and a control client of another user (bob) whose
 * card changes every 20 ms; each change is timed from the board to the
 * control's hands. Attackers, server and control share one process (and its
 * two cores), so the figures include the attackers' own work.
 */
import { performance } from 'node:perf_hooks';
import { Arena, type Attack } from '../../test/ui-server/hostileSession.js';
import { ADMIN, RawClient } from '../../test/ui-server/wsHarness.js';
import { median, percentile, writeResults } from '../stats.js';

const ATTACK_MS = 4_000;
const PROBE_EVERY_MS = 20;
const CARDS = 400;

interface Scenario {
  name: string;
  /** Limits over the defaults (only to show what a default buys). */
  limits?: Record<string, number>;
  /** Set up once before timing. */
  setup?: (a: Arena) => Promise<void>;
  /** One round of the attack, repeated until the time is up. */
  round?: (a: Arena) => Promise<void>;
}

const times = async (a: Arena, attack: Attack, n: number) => {
  for (let i = 0; i < n; i++) await a.attack(attack);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The flood of issue 14: 30 sockets × 40 subscribes, while the board keeps changing. */
const subscribeFlood = async (a: Arena) => {
  await a.attack({ kind: 'subscribeFlood', sockets: 30, count: 40, filtered: false });
  await a.attack({ kind: 'churn', changes: 1 });
  await sleep(50);
};

const SCENARIOS: Scenario[] = [
  { name: 'no attack (baseline)' },
  {
    name: 'garbage, bad JSON, unknown types, binary (50 sockets)',
    setup: (a) => a.attack({ kind: 'reconnect', count: 50 }),
    round: async (a) => {
      await times(a, { kind: 'garbage', text: '\u0000\u00ff garbage' }, 50);
      await times(a, { kind: 'badJson' }, 50);
      await times(a, { kind: 'unknownType', type: 'drop_tables' }, 50);
      await times(a, { kind: 'binary', bytes: new Uint8Array(64) }, 50);
      await sleep(5);
    },
  },
  {
    name: 'oversized frames (128 KiB, each closes its socket)',
    round: async (a) => {
      await times(a, { kind: 'oversize' }, 5);
      await sleep(5);
    },
  },
  {
    name: 'subscribe flood: 30 sockets × 40 subscribes, board changing',
    round: subscribeFlood,
  },
  {
    name: 'subscribe flood, per-user subscribe budget lifted (per-socket flood limit only)',
    limits: { subscribeBurst: 1_000_000, subscribePerSecond: 1_000_000 },
    round: subscribeFlood,
  },
  {
    name: 'reconnect storm (close and reopen 10 sockets per round)',
    round: async (a) => {
      await a.attack({ kind: 'reconnect', count: 10 });
      await sleep(5);
    },
  },
  {
    name: '30 readers that never read, board churning',
    setup: (a) => a.attack({ kind: 'slowReaders', count: 30 }),
    round: async (a) => {
      await a.attack({ kind: 'churn', changes: 50 });
      await a.attack({ kind: 'slowReaders', count: 2 });
      await sleep(20);
    },
  },
  {
    name: 'connection flood (alice opens sockets past her cap of 50)',
    round: async (a) => {
      await a.attack({ kind: 'slowReaders', count: 10 });
      await sleep(5);
    },
  },
];

interface Row {
  attack: string;
  probes: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  refusedConnections: number;
  adminConnected: boolean;
  foreignCards: number;
}

async function runScenario(s: Scenario): Promise<Row> {
  const arena = await Arena.start({
    limits: s.limits ?? {},
    cards: CARDS,
    lines: 5,
    realClock: true,
  });
  await s.setup?.(arena);
  for (let i = 0; i < 20; i++) await arena.probe(); // warm-up
  const samples: number[] = [];
  const end = performance.now() + ATTACK_MS;
  const attacking = (async () => {
    while (performance.now() < end) {
      if (s.round) await s.round(arena);
      else await sleep(20);
      arena.audit();
    }
  })();
  while (performance.now() < end) {
    samples.push(await arena.probe());
    await sleep(PROBE_EVERY_MS);
  }
  await attacking;
  // The admin is never locked out, whatever alice did.
  let adminConnected = false;
  try {
    const admin = await RawClient.open(arena.h.server.wsUrl, ADMIN);
    adminConnected = true;
    admin.ws.terminate();
  } catch {
    adminConnected = false;
  }
  arena.audit();
  const row = {
    attack: s.name,
    probes: samples.length,
    medianMs: median(samples),
    p99Ms: percentile(samples, 99),
    maxMs: Math.max(...samples),
    refusedConnections: arena.refused,
    adminConnected,
    foreignCards: arena.foreign.length,
  };
  await arena.close();
  return row;
}

export async function run(): Promise<void> {
  const rows: Row[] = [];
  for (const s of SCENARIOS) {
    const row = await runScenario(s);
    rows.push(row);
    process.stdout.write(`${JSON.stringify(row)}\n`);
  }
  const f = (n: number) => n.toFixed(2);
  const md = [
    '# Control client under attack',
    '',
    `Default limits, system clock. Alice (the attacker) has ${CARDS} cards (5 output lines of 200 characters each);`,
    `bob's control client gets one change every ${PROBE_EVERY_MS} ms for ${ATTACK_MS / 1000} s of each attack,`,
    'timed from the board to the patch in the control client. One process: server, attackers and control share two cores.',
    '',
    '| attack | probes | median ms | p99 ms | max ms | refused sockets | admin connects after | foreign cards |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.attack} | ${r.probes} | ${f(r.medianMs)} | ${f(r.p99Ms)} | ${f(r.maxMs)} | ${r.refusedConnections} | ${r.adminConnected ? 'yes' : 'no'} | ${r.foreignCards} |`,
    ),
  ].join('\n');
  writeResults('hostile', rows, md);
  process.stdout.write(`${md}\n`);
}
