/**
 * `roundtable enqueue --user U --title T --image I -- argv...`: one task.
 * Through the running node's API when one holds this data directory (it
 * starts at once), otherwise straight into the rows (the next start, or the
 * next Reconciler pass of a node on the same Postgres, picks it up). Either
 * way it never refuses for lack of room: it answers with a place in line.
 */
import { CONTROL_CHARACTER, submissionProblem } from '../../board/submission.js';
import { submitKey } from '../../board/submitKey.js';
import { timeLimitMs } from '../../board/timeLimit.js';
import { cutWellFormed } from '../../common/wellFormed.js';
import { keyTakenBy, newId, TEXT_LIMITS, ValidationError } from '../../db/index.js';
import { ownToken } from '../boardTokens.js';
import type { CommandContext } from '../commandContext.js';
import { commandRoute } from '../commandRoute.js';
import { CliError, EXIT, type ExitCode } from '../exitCodes.js';
import { nodeRequest } from '../nodeApi.js';
import { placeInLine } from '../placeInLine.js';
import { withRows } from '../rowsStore.js';
import { rowsTick } from '../rowsTick.js';

/** The image when none is given: the simulated cluster ignores it, Swarm pulls it. */
export const DEFAULT_IMAGE = 'alpine:3.20';

/**
 * `KEY=value` pairs into an env object.
 *
 * @example
 * ```ts
 * parseEnvPairs(['A=1', 'B=x=y']) // => { A: '1', B: 'x=y' }
 * parseEnvPairs([]) // => {}
 * parseEnvPairs(['nokey']) // throws CLI_USAGE
 * Object.keys(parseEnvPairs(['__proto__=x'])) // => ['__proto__']
 * ```
 */
export function parseEnvPairs(pairs: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq < 1) throw new CliError('CLI_USAGE', `--env ${pair}: expected KEY=value`);
    // Defined, not assigned: `env.__proto__ = x` would set the prototype and
    // drop the variable unheard, where the submission rules refuse it by name.
    Object.defineProperty(env, pair.slice(0, eq), {
      value: pair.slice(eq + 1),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return env;
}

/**
 * The `--key` flag: absent, or a valid submission key.
 *
 * @example
 * ```ts
 * submitKeyFlag(undefined) // => undefined
 * submitKeyFlag('nightly-2026-12-06') // => 'nightly-2026-12-06'
 * submitKeyFlag('two words') // throws CLI_USAGE
 * submitKeyFlag(true) // throws CLI_USAGE
 * ```
 */
export function submitKeyFlag(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const parsed = submitKey.safeParse(value);
  if (!parsed.success)
    throw new CliError('CLI_USAGE', '--key: 1-255 visible ASCII characters (no spaces)');
  return parsed.data;
}

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * The `--time-limit` flag: absent, or a duration with its unit (`ms`, `s`,
 * `m`, `h`, `d`) within a time limit's bounds (1 s to ~24.8 days), in ms.
 *
 * @example
 * ```ts
 * timeLimitFlag(undefined) // => undefined
 * timeLimitFlag('30m') // => 1800000
 * timeLimitFlag('90s') // => 90000
 * timeLimitFlag('1.5h') // => 5400000
 * timeLimitFlag('2d') // => 172800000
 * timeLimitFlag('30') // throws CLI_USAGE
 * timeLimitFlag('500ms') // throws CLI_USAGE
 * timeLimitFlag('30d') // throws CLI_USAGE
 * ```
 */
export function timeLimitFlag(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const m = typeof value === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(value) : null;
  const usage = (why: string) =>
    new CliError('CLI_USAGE', `--time-limit ${String(value)}: ${why}, e.g. 90s, 30m, 2h, 1d`);
  if (m === null) throw usage('a number and a unit (ms, s, m, h, d)');
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS]);
  const parsed = timeLimitMs.safeParse(ms);
  if (!parsed.success) throw usage('between 1s and ~24.8 days');
  return parsed.data;
}

/**
 * The title of a task enqueued without `--title`: its argv, cut to the
 * title's limit (UTF-16 units) without splitting a character in two, which
 * would leave a lone surrogate that the store refuses; a control character
 * (a script's newline or tab), which a title may not hold, reads as a space.
 *
 * @example
 * ```ts
 * titleFromArgv(['echo', 'hi']) // => 'echo hi'
 * titleFromArgv(['x'.repeat(300)]).length // => 200
 * titleFromArgv(['x'.repeat(199) + '🙂']) // => 'x'.repeat(199)
 * titleFromArgv(['sh', '-c', 'echo a\necho b']) // => 'sh -c echo a echo b'
 * ```
 */
export function titleFromArgv(argv: readonly string[]): string {
  const controls = new RegExp(CONTROL_CHARACTER.source, 'g');
  return cutWellFormed(argv.join(' ').replace(controls, ' '), TEXT_LIMITS.title);
}

/**
 * The flag (or part of the command) a submission's field came from.
 *
 * @example
 * ```ts
 * flagOfField('title') // => '--title'
 * flagOfField('env.1A') // => '--env 1A'
 * flagOfField('command.0') // => 'the program (the first word after --)'
 * flagOfField('command.2') // => 'argument 2 after the program'
 * flagOfField('command') // => 'the command after --'
 * flagOfField('timeLimitMs') // => '--time-limit'
 * ```
 */
export function flagOfField(field: string): string {
  const [head, ...rest] = field.split('.');
  const tail = rest.join('.');
  switch (head) {
    case 'title':
    case 'image':
      return `--${head}`;
    case 'env':
      return tail === '' ? '--env' : `--env ${tail}`;
    case 'timeLimitMs':
      return '--time-limit';
    case 'command':
      if (tail === '') return 'the command after --';
      return tail === '0'
        ? 'the program (the first word after --)'
        : `argument ${tail} after the program`;
    default:
      return field;
  }
}

export async function runEnqueue(ctx: CommandContext): Promise<ExitCode> {
  const { config, flags, rest } = ctx;
  if (rest.length === 0) {
    throw new CliError(
      'CLI_USAGE',
      'give the command after --, e.g. roundtable enqueue -- echo hi',
    );
  }
  // The config schema takes at least one user (cliConfig.ts: users.min(1)).
  const user = typeof flags['--user'] === 'string' ? flags['--user'] : config.users[0]!;
  const titled = typeof flags['--title'] === 'string';
  const title = titled ? (flags['--title'] as string) : titleFromArgv(rest);
  // Checked here, so the answer is the same whether a node or the rows would take it.
  if (titled && title.trim() === '') throw new CliError('CLI_USAGE', '--title must not be empty');
  const image = typeof flags['--image'] === 'string' ? flags['--image'] : DEFAULT_IMAGE;
  const envFlag = flags['--env'];
  const env = parseEnvPairs(Array.isArray(envFlag) ? envFlag : []);
  // Through a node, the node applies its own default to a task without a
  // limit; on the rows, this command applies the same setting's.
  const limit = timeLimitFlag(flags['--time-limit']);
  const rowsLimit =
    limit ?? (config.defaultTimeLimitMs === 0 ? undefined : config.defaultTimeLimitMs);
  const input = {
    title,
    image,
    command: rest,
    ...(Object.keys(env).length > 0 ? { env } : {}),
    ...(limit === undefined ? {} : { timeLimitMs: limit }),
  };
  const key = submitKeyFlag(flags['--key']);
  // The runtime's rules, before either path, so a node and the rows refuse
  // alike. A title made of the argv is blank only when the command is, which
  // is what to report.
  const problem = submissionProblem(
    titled || title.trim() !== '' ? input : { ...input, title: 'untitled' },
  );
  if (problem !== null)
    throw new CliError('CLI_USAGE', `${flagOfField(problem.field)}: ${problem.message}`);

  let result: {
    taskId: string;
    sessionId: string;
    position: number;
    replayed: boolean;
    via: string;
  };
  const route = commandRoute(config);
  if (route.kind === 'node') {
    const token = ownToken(route.tokens.users, user);
    if (token === undefined) {
      throw new CliError(
        'CLI_USAGE',
        `the running node has no token for user ${user}; its users are ${Object.keys(route.tokens.users).join(', ')} (add --users at start)`,
      );
    }
    const created = await nodeRequest<{
      taskId: string;
      sessionId: string;
      position: number;
      replayed?: boolean;
    }>(
      route.url,
      token,
      'POST',
      '/api/tasks',
      input,
      key === undefined ? {} : { 'idempotency-key': key },
    );
    result = { ...created, replayed: created.replayed === true, via: `node at ${route.url}` };
  } else {
    result = await withRows(ctx, { migrate: true }, async (db) => {
      // Through a tick like any node's write (with no grants for itself),
      // so the session takes its turn in the line and its exact position.
      try {
        const outcome = await rowsTick(db, config, {
          op: 'enqueue',
          ref: '1',
          taskId: newId('task'),
          sessionId: newId('session'),
          userId: user,
          title,
          spec: { image, command: rest, ...(input.env ? { env: input.env } : {}) },
          ...(key === undefined ? {} : { key }),
          ...(rowsLimit === undefined ? {} : { timeLimitMs: rowsLimit }),
        });
        const taken = keyTakenBy(outcome);
        if (taken !== undefined) {
          throw new CliError(
            'CLI_CONFLICT',
            `--key ${key} was submitted with another title or command: task ${taken}`,
          );
        }
        if (outcome.kind !== 'applied')
          throw new CliError('CLI_STORE', `the store did not take the task (${outcome.kind})`);
        return {
          taskId: outcome.session.taskId,
          sessionId: outcome.session.id,
          position: outcome.position ?? 0,
          replayed: outcome.replayed === true,
          via: 'rows',
        };
      } catch (error) {
        if (error instanceof ValidationError) {
          throw new CliError('CLI_USAGE', error.message, { cause: error });
        }
        throw error;
      }
    });
  }
  const place = result.replayed
    ? `submitted before with this key, ${result.position > 0 ? placeInLine(result.position) : 'no longer waiting'}`
    : placeInLine(result.position);
  ctx.io.stdout.write(
    flags['--json'] === true
      ? `${JSON.stringify(result)}\n`
      : `${result.taskId} for ${user}: ${place} (via ${result.via})\n`,
  );
  return EXIT.ok;
}
