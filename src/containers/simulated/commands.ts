/**
 * Scripted commands for the simulated cluster: what a command prints, when,
 * and how it exits. Keyed by argv[0]; an unknown command behaves like a shell
 * that cannot find it (exit 127).
 */

/** One command's scripted run; times are milliseconds after the exec starts. */
export interface SimScript {
  output: ReadonlyArray<{ atMs: number; text: string }>;
  durationMs: number;
  exitCode: number;
}

export type SimCommand = (args: readonly string[]) => SimScript;

export type SimCommandRegistry = Readonly<Record<string, SimCommand>>;

const AGENT_STEPS = [
  'reading the task description',
  'cloning the repository',
  'installing dependencies',
  'exploring the code base',
  'writing a failing test',
  'editing source files',
  'running the test suite',
  'fixing a type error',
  'running the test suite again',
  'committing the change',
];

/**
 * The commands `npm start` and the tests use without Docker:
 * - `echo ...words`: prints the words at once, exits 0;
 * - `sleep <seconds>`: prints nothing, exits 0 after that long;
 * - `fail <code> [text]`: prints text, exits with `code`;
 * - `emit <bytes>`: prints that many bytes of lines, exits 0;
 * - `agent [seconds=60] [exit=0]`: a coding agent narrating its work over time.
 *
 * @example
 * ```ts
 * scriptFor(defaultCommands, ['echo', 'hi', 'there']) // => { output: [{ atMs: 0, text: 'hi there\n' }], durationMs: 0, exitCode: 0 }
 * scriptFor(defaultCommands, ['fail', '3', 'bad']).exitCode // => 3
 * scriptFor(defaultCommands, ['fail', '0']).exitCode // => 0
 * scriptFor(defaultCommands, ['nope']).exitCode // => 127
 * scriptFor(defaultCommands, ['emit', '2048']).output.map((o) => o.text).join('').length // => 2048
 * scriptFor(defaultCommands, ['agent', '10']).durationMs // => 10000
 * ```
 */
export const defaultCommands: SimCommandRegistry = {
  echo: (args) => ({
    output: [{ atMs: 0, text: `${args.join(' ')}\n` }],
    durationMs: 0,
    exitCode: 0,
  }),
  sleep: (args) => ({ output: [], durationMs: seconds(args[0], 1), exitCode: 0 }),
  fail: (args) => ({
    output: args.length > 1 ? [{ atMs: 0, text: `${args.slice(1).join(' ')}\n` }] : [],
    durationMs: 0,
    exitCode: exitCodeOf(args[0], 1),
  }),
  emit: (args) => {
    const bytes = Math.max(0, Number.parseInt(args[0] ?? '0', 10) || 0);
    const line = `${'x'.repeat(63)}\n`;
    const text = line.repeat(Math.floor(bytes / 64)) + 'y'.repeat(bytes % 64);
    return { output: [{ atMs: 0, text }], durationMs: 0, exitCode: 0 };
  },
  agent: (args) => {
    const durationMs = seconds(args[0], 60);
    const exitCode = exitCodeOf(args[1], 0);
    const output = AGENT_STEPS.map((step, i) => ({
      atMs: Math.floor((durationMs * i) / AGENT_STEPS.length),
      text: `[agent] ${step}...\n`,
    }));
    output.push({
      atMs: durationMs,
      text: exitCode === 0 ? '[agent] done\n' : '[agent] gave up\n',
    });
    return { output, durationMs, exitCode };
  },
};

function exitCodeOf(value: string | undefined, fallback: number): number {
  const parsed = Number.parseInt(value ?? '', 10);
  return Number.isInteger(parsed) && parsed >= 0 && parsed <= 255 ? parsed : fallback;
}

function seconds(value: string | undefined, fallback: number): number {
  const parsed = Number.parseFloat(value ?? '');
  return Math.round((Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback) * 1000);
}

/** Looks the command up; unknown commands fail like `sh` would. */
export function scriptFor(registry: SimCommandRegistry, argv: readonly string[]): SimScript {
  const [name = '', ...args] = argv;
  const command = Object.hasOwn(registry, name) ? registry[name] : undefined;
  if (!command) {
    return {
      output: [{ atMs: 0, text: `sh: ${name}: not found\n` }],
      durationMs: 0,
      exitCode: 127,
    };
  }
  return command(args);
}
