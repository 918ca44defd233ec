/**
 * The command table: each command's flags, help text and runner. `--help`
 * is generated from it and from the settings table, so it cannot drift.
 */
import type { CliConfig } from './cliConfig.js';
import { SETTINGS, type SettingGroup } from './cliSettings.js';
import type { CommandContext } from './commandContext.js';
import { runCancel } from './commands/cancel.js';
import { DEMO_DEFAULTS, runDemo } from './commands/demo.js';
import { DEFAULT_IMAGE, runEnqueue } from './commands/enqueue.js';
import { runLogs } from './commands/logs.js';
import { runMigrate } from './commands/migrate.js';
import { runRetry } from './commands/retry.js';
import { runShow } from './commands/show.js';
import { runStart } from './commands/start.js';
import { runStatus } from './commands/status.js';
import type { ExitCode } from './exitCodes.js';
import type { FlagSpec } from './parseArgv.js';
import { configValue } from './resolveConfig.js';

export interface CommandDef {
  name: string;
  args: string;
  summary: string;
  description: string;
  groups: readonly SettingGroup[];
  /** The command's own flags: name, value placeholder (none for a switch), help. */
  own: ReadonlyArray<{ flag: string; value?: string; help: string; repeatable?: boolean }>;
  /** Whether its logs go to stdout (long-running commands) or stderr (stdout is the answer). */
  logsToStdout: boolean;
  commandDefaults?: Record<string, unknown>;
  /** Whether it names one task (its one positional word, in `ctx.positionals[0]`). */
  takesTask?: boolean;
  run(ctx: CommandContext): Promise<ExitCode>;
}

const COMMON = [
  { flag: '--config', value: '<file>', help: 'JSON configuration file (also ROUNDTABLE_CONFIG)' },
  { flag: '--help', help: 'this text' },
];
const JSON_FLAG = { flag: '--json', help: 'print the result as one JSON line' };
const DOCKER_FLAG = { flag: '--docker', help: 'run on Docker Swarm (same as --backend swarm)' };

export const COMMANDS: readonly CommandDef[] = [
  {
    name: 'start',
    args: '[options]',
    summary: 'run a node: runtime, board and inspector',
    description:
      'Runs the runtime in the foreground on the embedded PGlite store (or DATABASE_URL). Runs go\n' +
      'to the backend named by --backend; with none named, to Docker Swarm if the Docker engine\n' +
      '(DOCKER_HOST) is a Swarm manager, plain Docker if it answers outside Swarm, else to local\n' +
      'processes run as this OS user, with their files in the data directory. Prints the board and\n' +
      'inspector URLs and which backend and why. Ctrl-C (or SIGTERM) stops the supervision tree in\n' +
      'order and closes the store; runs go on, the queue is in the rows, and the next start\n' +
      'resumes it and adopts the runs.',
    groups: ['store', 'log', 'node', 'containers'],
    own: [DOCKER_FLAG],
    logsToStdout: true,
    run: (ctx) => runStart(ctx),
  },
  {
    name: 'demo',
    args: '[options]',
    summary: 'start plus a workload that shows every state within a minute',
    description:
      'Like start, with users submitting more tasks than the caps allow, some failing, one\n' +
      'container rescheduled under a running session, one card cancelled and one retried.\n' +
      `Keeps its data in ${DEMO_DEFAULTS.dataDir} and runs on the simulated cluster unless told otherwise.`,
    groups: ['store', 'log', 'node', 'containers', 'demo'],
    own: [DOCKER_FLAG],
    logsToStdout: true,
    commandDefaults: { ...DEMO_DEFAULTS },
    run: (ctx) => runDemo(ctx),
  },
  {
    name: 'migrate',
    args: '[options]',
    summary: 'bring the schema up to date',
    description:
      'Applies the migrations not yet recorded. Safe to run from several machines at once.',
    groups: ['store', 'log'],
    own: [JSON_FLAG],
    logsToStdout: false,
    run: (ctx) => runMigrate(ctx),
  },
  {
    name: 'status',
    args: '[options]',
    summary: 'the line, the runners and per-user counts',
    description:
      'Counts sessions by user and status from the rows. When a node holds the PGlite directory,\n' +
      'asks that node instead (its pool is an index over the same rows).',
    groups: ['store', 'log'],
    own: [JSON_FLAG],
    logsToStdout: false,
    run: (ctx) => runStatus(ctx),
  },
  {
    name: 'enqueue',
    args: '[options] -- <command> [args...]',
    summary: 'add a task from the command line',
    description:
      'Queues one task. Through the running node when there is one (it starts at once), else into\n' +
      'the rows (the next start picks it up). Never refused for lack of room: prints the position.',
    groups: ['store', 'log'],
    own: [
      { flag: '--user', value: '<id>', help: 'whose task (default: the first of users)' },
      { flag: '--title', value: '<text>', help: 'card title (default: the command)' },
      { flag: '--image', value: '<image>', help: `container image (default: ${DEFAULT_IMAGE})` },
      {
        flag: '--env',
        value: '<KEY=value>',
        help: 'environment of the run; repeatable',
        repeatable: true,
      },
      {
        flag: '--key',
        value: '<key>',
        help: "idempotency key: run again with it, the user's task it queued is answered, no second one",
      },
      {
        flag: '--time-limit',
        value: '<duration>',
        help: 'fail the run as timed_out and stop it after this long (90s, 30m, 2h, 1d; default: none)',
      },
      JSON_FLAG,
    ],
    logsToStdout: false,
    run: (ctx) => runEnqueue(ctx),
  },
  {
    name: 'show',
    args: '<task> [options]',
    summary: 'a task and every attempt, with why each ended',
    description:
      'Prints what the task runs and each attempt: its status, why it ended, when, and on which\n' +
      'node. Through the running node when there is one, else from the rows; the same answer.',
    groups: ['store', 'log'],
    own: [JSON_FLAG],
    logsToStdout: false,
    takesTask: true,
    run: (ctx) => runShow(ctx),
  },
  {
    name: 'logs',
    args: '<task> [options]',
    summary: "what a task's attempt printed, as stored when it ended",
    description:
      "Writes the stored output of the task's latest attempt (or --attempt N) to stdout as it is,\n" +
      'up to 16 MiB (a longer one keeps its tail behind a marker line). Through the running node\n' +
      'when there is one, else from the rows; the same bytes. An attempt still queued or running,\n' +
      'or one that ended without output, exits 9 and says why on stderr.',
    groups: ['store', 'log'],
    own: [
      {
        flag: '--attempt',
        value: '<n>',
        help: 'which attempt, 1 for the first (default: the latest)',
      },
      { flag: '--json', help: 'one JSON line: the attempt, totalBytes, truncated and the text' },
    ],
    logsToStdout: false,
    takesTask: true,
    run: (ctx) => runLogs(ctx),
  },
  {
    name: 'cancel',
    args: '<task> [options]',
    summary: "end a task's waiting or running attempt",
    description:
      'Cancels the latest attempt, as the admin: a queued attempt leaves the line, a running one is\n' +
      'stopped (the row first, then its container). Through the running node when there is one;\n' +
      'otherwise on the rows, and the container is removed from here through the backend the row\n' +
      "names (--docker-host, --namespace), or, when it cannot be, by a node's next reconcile pass.",
    groups: ['store', 'log', 'containers'],
    own: [JSON_FLAG],
    logsToStdout: false,
    takesTask: true,
    run: (ctx) => runCancel(ctx),
  },
  {
    name: 'retry',
    args: '<task> [options]',
    summary: 'a new attempt of a failed or cancelled task',
    description:
      "Queues a new attempt at the back of the user's line, as the board's Retry does. Through the\n" +
      'running node when there is one, else into the rows (the next start runs it). Prints the position.',
    groups: ['store', 'log'],
    own: [JSON_FLAG],
    logsToStdout: false,
    takesTask: true,
    run: (ctx) => runRetry(ctx),
  },
];

/** The flags a command accepts. */
export function flagSpecOf(command: CommandDef): FlagSpec {
  const settingFlags = SETTINGS.flatMap((s) =>
    s.flag && command.groups.includes(s.group) ? [s.flag] : [],
  );
  const own = [...COMMON, ...command.own];
  return {
    values: [...settingFlags, ...own.filter((o) => o.value).map((o) => o.flag)],
    switches: own.filter((o) => !o.value).map((o) => o.flag),
    repeatable: command.own.filter((o) => o.repeatable).map((o) => o.flag),
  };
}

/** `roundtable <command> --help`, with each setting's variable and default. */
export function commandHelp(command: CommandDef, defaults: CliConfig): string {
  const rows: Array<[string, string]> = [...COMMON, ...command.own].map((o) => [
    `${o.flag}${o.value ? ` ${o.value}` : ''}`,
    o.help,
  ]);
  for (const s of SETTINGS) {
    if (!s.flag || !command.groups.includes(s.group)) continue;
    const value = command.commandDefaults?.[s.key] ?? configValue(defaults, s.key);
    const shown =
      value === undefined
        ? ''
        : `, default ${Array.isArray(value) ? value.join(',') : String(value)}`;
    rows.push([
      `${s.flag} <${s.kind === 'list' ? 'a,b' : s.kind === 'int' || s.kind === 'number' ? 'n' : 'value'}>`,
      `${s.help} (${s.env}${shown})`,
    ]);
  }
  const width = Math.max(...rows.map(([f]) => f.length));
  return [
    `roundtable ${command.name} ${command.args}`,
    '',
    command.description,
    '',
    'options:',
    ...rows.map(([f, h]) => `  ${f.padEnd(width)}  ${h}`),
    '',
    'Exit codes: 0 ok, 1 failure, 2 usage or config, 3 store, 4 data dir in use, 5 node failed,',
    '6 stop deadline passed, 7 no such task, 8 task in another state, 9 no stored output,',
    '130 second Ctrl-C. See docs/operations.md.',
    '',
  ].join('\n');
}

/** `roundtable --help`. */
export function generalHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'roundtable <command> [options]',
    '',
    'Erlang/OTP supervision for XState actors, running long jobs in containers that outlive deploys.',
    '',
    'commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Run `roundtable <command> --help` for its options. Settings come from flags, then',
    'ROUNDTABLE_* variables (and DATABASE_URL, DOCKER_HOST), then --config <file>, then defaults.',
    '',
  ].join('\n');
}
