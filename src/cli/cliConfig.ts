/**
 * The CLI's configuration: one defaults object and one zod schema. How each
 * setting is reached from the command line and the environment is the table
 * of cliSettings.ts.
 */

import { z } from 'zod';
import { defaultNodeId } from '../actors/runtimeOptions.js';
import { refuseProtoKey } from '../board/protoKey.js';
import { timeLimitMs } from '../board/timeLimit.js';
import { MAX_TIMER_MS } from '../common/maxTimerMs.js';
import { DEFAULT_NAMESPACE, NAMESPACE_PATTERN } from '../containers/namespace.js';
import { MAX_STALE_AFTER_MS } from '../db/nodeHeartbeats.js';
import { UI_SERVER_DEFAULTS } from '../ui-server/uiServerOptions.js';

const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 of A-Z a-z 0-9 _ . -');
// The UI server's token alphabet: tokens also travel in a WebSocket subprotocol.
const token = z
  .string()
  .regex(/^[A-Za-z0-9._~-]{16,256}$/, 'must be 16-256 of A-Z a-z 0-9 . _ ~ -');
/**
 * A duration a timer waits. Node's timers hold at most 2^31 - 1 ms (~24.8
 * days): a longer one fires after 1 ms (a TimeoutOverflowWarning), so a
 * `--reconcile-ms 3000000000` ran a pass every millisecond and a
 * `--shutdown-ms 3000000000` ended every stop at once with exit 6.
 */
const ms = z
  .number()
  .int()
  .positive()
  .max(MAX_TIMER_MS, `must be at most ${MAX_TIMER_MS} (ms, ~24.8 days: a timer's limit)`);

/** The validated configuration every command receives. */
export const cliConfigSchema = z.strictObject({
  dataDir: z.string().min(1),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://')
    .optional(),
  /** `transaction`: the server is behind a transaction pooler (PgBouncer): poll, no session state. */
  pooler: z.enum(['none', 'transaction']),
  host: z.string().min(1),
  port: z.number().int().min(0).max(65_535),
  backend: z.enum(['auto', 'local', 'docker', 'swarm', 'simulated']),
  dockerHost: z.string().min(1).optional(),
  namespace: z
    .string()
    .regex(
      NAMESPACE_PATTERN,
      'must be 1-32 of a-z 0-9 -, starting and ending with a letter or digit',
    ),
  nodeId: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/, 'must be 1-100 of A-Z a-z 0-9 _ . : -'),
  runnerImage: z.string().min(1).max(255).optional(),
  caps: z.strictObject({
    maxRunning: z.number().int().min(0).max(10_000),
    defaultUserCap: z.number().int().min(0).max(10_000),
  }),
  users: z.array(userName).min(1).max(100),
  tokens: z.strictObject({
    admin: token.optional(),
    // zod's record would drop an own __proto__ key unheard (that user's
    // token silently ignored): refused by name (src/board/protoKey.ts).
    users: z.preprocess(
      refuseProtoKey('is not a user name a token can be given to'),
      z.record(userName, token),
    ),
  }),
  pollMs: ms,
  adoptBudgetMs: ms,
  reconcileMs: ms,
  /**
   * How long finished work is kept (ms): past it, a task whose every
   * attempt ended leaves the board and its rows are deleted. 0: for ever.
   */
  retentionMs: z.number().int().min(0),
  /**
   * The time limit of a task submitted without one (ms; 1,000 to
   * 2,147,483,647): any run holding a runner longer fails as `timed_out`.
   * 0: none.
   */
  defaultTimeLimitMs: z.union([z.literal(0), timeLimitMs], '0 (none), or 1000 to 2147483647'),
  /** One Reconciler at a time over every node: `auto` is on for a Postgres server. */
  reconcileLock: z.enum(['auto', 'on', 'off']),
  /** Each boot's liveness lock: `off`, or `pooler: 'transaction'`, leaves the heartbeat rows alone. */
  bootLock: z.enum(['auto', 'off']),
  /**
   * How long this node's heartbeat vouches for it: silent longer, another
   * node takes its runs over. Absent: 10 s behind a transaction pooler, else
   * three beats of a third of `reconcileMs` (a boot lock sees a death first).
   */
  deadAfterMs: z
    .number()
    .int()
    .min(2_000, 'must be at least 2000 (ms): a short stall must not read as a death')
    .max(MAX_STALE_AFTER_MS, `must be at most ${MAX_STALE_AFTER_MS} (a day)`)
    .optional(),
  shutdownMs: ms,
  /**
   * Connections one remote address may hold at the board, requests and
   * WebSockets together. Behind a reverse proxy every client has the
   * proxy's address: raise it there. Absent: the board's defaults (256, of
   * which 200 WebSockets).
   */
  perAddress: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(
      UI_SERVER_DEFAULTS.maxTcpConnections - 1,
      `must be at most ${UI_SERVER_DEFAULTS.maxTcpConnections - 1}, under the board's ${UI_SERVER_DEFAULTS.maxTcpConnections} connections in all`,
    )
    .optional(),
  simulated: z.strictObject({
    nodes: z.number().int().min(1).max(50),
    speed: z.number().positive().max(1000),
    rescheduleDelayMs: z.number().int().min(0),
  }),
  log: z.strictObject({
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
    format: z.enum(['auto', 'json', 'pretty']),
  }),
  demo: z.strictObject({
    users: z.array(userName).min(1).max(20),
    tasksPerUser: z.number().int().min(1).max(100),
  }),
});

export type CliConfig = z.infer<typeof cliConfigSchema>;

// The runtime's own default, so a library user's node and the CLI's have one name.
export { defaultNodeId } from '../actors/runtimeOptions.js';

/** Every default in one object (the ws habit): what `roundtable start` runs with when given nothing. */
export function cliDefaults(): CliConfig {
  return {
    dataDir: './.roundtable',
    pooler: 'none',
    host: '127.0.0.1',
    port: 4100,
    backend: 'auto',
    namespace: DEFAULT_NAMESPACE,
    nodeId: defaultNodeId(),
    caps: { maxRunning: 4, defaultUserCap: 2 },
    users: ['demo'],
    tokens: { users: {} },
    pollMs: 5_000,
    adoptBudgetMs: 15 * 60 * 1000,
    reconcileMs: 60_000,
    retentionMs: 7 * 24 * 60 * 60 * 1000,
    defaultTimeLimitMs: 0,
    reconcileLock: 'auto',
    bootLock: 'auto',
    shutdownMs: 15_000,
    simulated: { nodes: 2, speed: 1, rescheduleDelayMs: 1_000 },
    log: { level: 'info', format: 'auto' },
    demo: { users: ['alice', 'bob', 'carol'], tasksPerUser: 5 },
  };
}
