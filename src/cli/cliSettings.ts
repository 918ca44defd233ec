/**
 * The table of the CLI's settings: for every leaf of the configuration
 * (cliConfig.ts), its flag, its environment variable and its help line.
 * `--help`, the parser and docs/operations.md all read it, so a setting
 * cannot exist in one place and be missing from another.
 */
/** Which commands a setting matters to. */
/** `containers`: where runs live (the node's, and `cancel`'s, which removes a run's container). */
export type SettingGroup = 'store' | 'node' | 'containers' | 'log' | 'demo';

/** One leaf of the configuration, as the command line and environment see it. */
export interface Setting {
  /** Dotted path in {@link CliConfig}. */
  key: string;
  flag?: string;
  env?: string;
  kind: 'string' | 'int' | 'number' | 'enum' | 'list';
  group: SettingGroup;
  help: string;
}

/** Every setting reachable from flags or the environment (the file reaches every key). */
export const SETTINGS: readonly Setting[] = [
  {
    key: 'dataDir',
    flag: '--data-dir',
    env: 'ROUNDTABLE_DATA_DIR',
    kind: 'string',
    group: 'store',
    help: 'state directory: PGlite data, tokens, node file',
  },
  {
    key: 'databaseUrl',
    flag: '--database-url',
    env: 'DATABASE_URL',
    kind: 'string',
    group: 'store',
    help: 'use this Postgres server instead of the embedded PGlite',
  },
  {
    key: 'pooler',
    flag: '--pooler',
    env: 'ROUNDTABLE_POOLER',
    kind: 'enum',
    group: 'store',
    help: "none | transaction (the server is behind PgBouncer in transaction mode: no LISTEN, other nodes' ticks are polled each second; no session locks, liveness by heartbeat rows; no settings in the startup packet)",
  },
  {
    key: 'log.level',
    flag: '--log-level',
    env: 'ROUNDTABLE_LOG_LEVEL',
    kind: 'enum',
    group: 'log',
    help: 'trace | debug | info | warn | error | fatal | silent',
  },
  {
    key: 'log.format',
    flag: '--log-format',
    env: 'ROUNDTABLE_LOG_FORMAT',
    kind: 'enum',
    group: 'log',
    help: 'auto (readable on a TTY, JSON lines otherwise) | json | pretty',
  },
  {
    key: 'host',
    flag: '--host',
    env: 'ROUNDTABLE_HOST',
    kind: 'string',
    group: 'node',
    help: 'address the board listens on',
  },
  {
    key: 'port',
    flag: '--port',
    env: 'ROUNDTABLE_PORT',
    kind: 'int',
    group: 'node',
    help: 'port of the board (0 picks a free one)',
  },
  {
    key: 'backend',
    flag: '--backend',
    env: 'ROUNDTABLE_BACKEND',
    kind: 'enum',
    group: 'node',
    help: 'auto (Swarm if the Docker engine is a manager, else Docker if one answers, else local) | local | docker | swarm | simulated',
  },
  {
    key: 'dockerHost',
    flag: '--docker-host',
    env: 'DOCKER_HOST',
    kind: 'string',
    group: 'containers',
    help: 'Docker engine address (unix://, tcp://)',
  },
  {
    key: 'namespace',
    flag: '--namespace',
    env: 'ROUNDTABLE_NAMESPACE',
    kind: 'string',
    group: 'containers',
    help: 'the runs this deployment owns on a shared engine (a-z 0-9 -, default: default)',
  },
  {
    key: 'nodeId',
    flag: '--node-id',
    env: 'ROUNDTABLE_NODE_ID',
    kind: 'string',
    group: 'node',
    help: "this machine's stable name (default: the host name)",
  },
  {
    key: 'runnerImage',
    flag: '--runner-image',
    env: 'ROUNDTABLE_RUNNER_IMAGE',
    kind: 'string',
    group: 'node',
    help: 're-pin every run to this image at boot',
  },
  {
    key: 'caps.maxRunning',
    flag: '--max-running',
    env: 'ROUNDTABLE_MAX_RUNNING',
    kind: 'int',
    group: 'node',
    help: 'global cap: runs at once over every node',
  },
  {
    key: 'caps.defaultUserCap',
    flag: '--user-cap',
    env: 'ROUNDTABLE_USER_CAP',
    kind: 'int',
    group: 'node',
    help: 'per-user cap for users without an override',
  },
  {
    key: 'users',
    flag: '--users',
    env: 'ROUNDTABLE_USERS',
    kind: 'list',
    group: 'node',
    help: 'comma-separated users that get a board token',
  },
  {
    key: 'tokens.admin',
    env: 'ROUNDTABLE_ADMIN_TOKEN',
    kind: 'string',
    group: 'node',
    help: 'admin token (default: generated once, kept in the data dir)',
  },
  {
    key: 'pollMs',
    flag: '--poll-ms',
    env: 'ROUNDTABLE_POLL_MS',
    kind: 'int',
    group: 'node',
    help: 'delay between two looks at an adopted run',
  },
  {
    key: 'adoptBudgetMs',
    flag: '--adopt-budget-ms',
    env: 'ROUNDTABLE_ADOPT_BUDGET_MS',
    kind: 'int',
    group: 'node',
    help: 'wall-clock budget of one adoption',
  },
  {
    key: 'reconcileMs',
    flag: '--reconcile-ms',
    env: 'ROUNDTABLE_RECONCILE_MS',
    kind: 'int',
    group: 'node',
    help: 'Reconciler period',
  },
  {
    key: 'retentionMs',
    flag: '--retention-ms',
    env: 'ROUNDTABLE_RETENTION_MS',
    kind: 'int',
    group: 'node',
    help: 'how long finished work is kept: past it, a task whose every attempt ended leaves the board and its rows (sessions, history, output) are deleted; 0 keeps it for ever (604800000 is 7 days)',
  },
  {
    key: 'defaultTimeLimitMs',
    flag: '--default-time-limit-ms',
    env: 'ROUNDTABLE_DEFAULT_TIME_LIMIT_MS',
    kind: 'int',
    group: 'node',
    help: 'time limit of a task submitted without one: a run holding its runner longer fails as timed_out and is stopped; 0 (default) is none (21600000 is 6 hours)',
  },
  {
    key: 'reconcileLock',
    flag: '--reconcile-lock',
    env: 'ROUNDTABLE_RECONCILE_LOCK',
    kind: 'enum',
    group: 'node',
    help: 'one Reconciler at a time over every node: auto (on for a Postgres server, off with --pooler transaction) | on | off',
  },
  {
    key: 'bootLock',
    flag: '--boot-lock',
    env: 'ROUNDTABLE_BOOT_LOCK',
    kind: 'enum',
    group: 'node',
    help: "auto (each boot holds a liveness lock on a Postgres server: a node's death is seen within a second; none with --pooler transaction) | off (heartbeat rows only)",
  },
  {
    key: 'deadAfterMs',
    flag: '--dead-after-ms',
    env: 'ROUNDTABLE_DEAD_AFTER_MS',
    kind: 'int',
    group: 'node',
    help: "how long this node's heartbeat vouches for it, 2000 to 86400000 (it beats every fifth of it; others judge it by its own row): silent longer, its runs are taken over. Default 10000 with --pooler transaction, else reconcile-ms (a boot lock sees a crash at once)",
  },
  {
    key: 'perAddress',
    flag: '--per-address',
    env: 'ROUNDTABLE_PER_ADDRESS',
    kind: 'int',
    group: 'node',
    help: "connections one remote address may hold at the board, requests and WebSockets together (default 256, of which 200 WebSockets); behind a reverse proxy every client has the proxy's address: raise it there",
  },
  {
    key: 'shutdownMs',
    flag: '--shutdown-ms',
    env: 'ROUNDTABLE_SHUTDOWN_MS',
    kind: 'int',
    group: 'node',
    help: 'deadline of a stop before the process ends anyway',
  },
  {
    key: 'simulated.nodes',
    flag: '--sim-nodes',
    env: 'ROUNDTABLE_SIM_NODES',
    kind: 'int',
    group: 'node',
    help: 'machines in the simulated cluster',
  },
  {
    key: 'simulated.speed',
    flag: '--sim-speed',
    env: 'ROUNDTABLE_SIM_SPEED',
    kind: 'number',
    group: 'node',
    help: 'simulated commands run this many times faster',
  },
  {
    key: 'simulated.rescheduleDelayMs',
    flag: '--sim-reschedule-ms',
    env: 'ROUNDTABLE_SIM_RESCHEDULE_MS',
    kind: 'int',
    group: 'node',
    help: 'how long a lost simulated container takes to come back',
  },
  {
    key: 'demo.users',
    flag: '--demo-users',
    env: 'ROUNDTABLE_DEMO_USERS',
    kind: 'list',
    group: 'demo',
    help: 'comma-separated users of the demo workload',
  },
  {
    key: 'demo.tasksPerUser',
    flag: '--demo-tasks',
    env: 'ROUNDTABLE_DEMO_TASKS',
    kind: 'int',
    group: 'demo',
    help: 'tasks each demo user submits',
  },
];
