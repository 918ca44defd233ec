/**
 * `roundtable/testing/property`: a fast-check property that is chaos on every
 * run of a suite and exact when it fails. Each run draws a fresh seed and
 * prints it; as many cases run as the count and the time budget allow; a
 * failure is shrunk (within its own budget) and thrown as a
 * `ReplayableFailure` whose message is the one command that replays the
 * smallest failing case: `<PREFIX>_SEED=.. <PREFIX>_PATH=.. npx vitest run
 * <file>`. With those variables set, only that case runs.
 *
 * fast-check's own time limits are not used: `interruptAfterTimeLimit` races
 * the running case (which would leave a harness open under the next one) and
 * both it and `skipAllAfterTimeLimit` also cut the shrinking. Here a case is
 * never interrupted; the budget is checked before each one starts.
 * Needs fast-check (an optional peer dependency); `roundtable/testing` does not.
 */
import fc from 'fast-check';

export interface ReplayableOptions {
  /** Names the environment variables: `STORM` reads `STORM_SEED`, `STORM_PATH`, `STORM_RUNS`. */
  prefix: string;
  /** The command the replay line ends with, e.g. `npx vitest run test/storm.test.ts`. */
  command: string;
  /** Cases to try at most (`<PREFIX>_RUNS` overrides). Default 50. */
  numRuns?: number;
  /** No case but the first starts after this many ms of wall time. Default 60 000. */
  budgetMs?: number;
  /** No shrink step starts after this many ms from the first failure. Default 120 000. */
  shrinkBudgetMs?: number;
  /** Where the seed, the first failure and the result are written. Default console.info. */
  log?: (line: string) => void;
  /** The environment to read the variables from. Default process.env. */
  env?: Record<string, string | undefined>;
  /** Wall time, for the budgets; injectable so a test of this helper can move it. */
  now?: () => number;
}

/** What one call ran, for the caller to assert on or print. */
export interface ReplayableReport {
  seed: number;
  /** The path replayed, when `<PREFIX>_PATH` was set. */
  path: string | undefined;
  /** Cases run to completion before the budget or the count stopped them. */
  runs: number;
  /** True when the time budget, not the count, ended the runs. */
  outOfTime: boolean;
}

/** The property failed; `message` ends with the command replaying `counterexample`. */
export class ReplayableFailure extends Error {
  override readonly name = 'ReplayableFailure';
  readonly code = 'PROPERTY_FAILED';
  constructor(
    readonly seed: number,
    readonly path: string,
    readonly counterexample: unknown,
    readonly replay: string,
    readonly shrinks: number,
    cause: unknown,
  ) {
    super(
      `property failed (seed ${seed}, shrunk ${shrinks} time(s)); smallest case: ` +
        `${fc.stringify(counterexample)}\nerror: ${describe(cause)}\nreplay: ${replay}`,
      { cause },
    );
  }
}

/** A bad `<PREFIX>_SEED` / `_PATH` / `_RUNS` value, named. */
export class ReplayableOptionError extends Error {
  override readonly name = 'ReplayableOptionError';
  readonly code = 'INVALID_REPLAY_OPTION';
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

function readInt(env: Record<string, string | undefined>, key: string): number | undefined {
  const raw = env[key];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new ReplayableOptionError(`${key}=${raw} is not an integer`);
  return n;
}

/**
 * The replay command for one case.
 *
 * @example
 * ```ts
 * replayCommand('STORM', 7, '3:1', 'npx vitest run t.test.ts') // => "STORM_SEED=7 STORM_PATH='3:1' npx vitest run t.test.ts"
 * ```
 */
export function replayCommand(prefix: string, seed: number, path: string, command: string): string {
  return `${prefix}_SEED=${seed} ${prefix}_PATH='${path}' ${command}`;
}

/** A seed for this run of the suite: any 32-bit integer, fast-check's range. */
function freshSeed(): number {
  return (Date.now() ^ Math.floor(Math.random() * 0x1_0000_0000)) | 0;
}

/**
 * Checks `predicate` (which throws or returns false on a failure) over
 * `arbitrary` as described above; resolves with what ran, rejects with a
 * `ReplayableFailure`.
 */
export async function assertReplayable<T>(
  arbitrary: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<unknown>,
  options: ReplayableOptions,
): Promise<ReplayableReport> {
  const env = options.env ?? process.env;
  const now = options.now ?? Date.now;
  const log = options.log ?? ((line: string) => console.info(line));
  const { prefix, command } = options;
  const given = readInt(env, `${prefix}_SEED`);
  const seed = given ?? freshSeed();
  const path = env[`${prefix}_PATH`] || undefined;
  if (path !== undefined && given === undefined)
    throw new ReplayableOptionError(`${prefix}_PATH needs the ${prefix}_SEED it came from`);
  if (path !== undefined && !/^\d+(:\d+)*$/.test(path))
    throw new ReplayableOptionError(`${prefix}_PATH=${path} is not a fast-check path (3:0:1)`);
  const numRuns = readInt(env, `${prefix}_RUNS`) ?? options.numRuns ?? 50;
  const budgetMs = options.budgetMs ?? 60_000;
  const shrinkBudgetMs = options.shrinkBudgetMs ?? 120_000;

  log(
    path === undefined
      ? `[${prefix}] seed ${seed}, up to ${numRuns} runs in ${budgetMs} ms (${prefix}_SEED=${seed} ${command} runs them again)`
      : `[${prefix}] replaying seed ${seed} path ${path}`,
  );
  const started = now();
  let failedAt: number | undefined;
  let runs = 0;
  let outOfTime = false;
  const property = fc.asyncProperty(arbitrary, async (value) => {
    // A replay runs its one case (and the shrinks after it) whatever the clock says.
    if (path === undefined) {
      // The first case always runs: fast-check calls a check that ran none
      // failed, which came out as a ReplayableFailure with nothing in it.
      if (failedAt === undefined && runs > 0 && now() - started >= budgetMs) {
        outOfTime = true;
        throw new fc.PreconditionFailure(true);
      }
      if (failedAt !== undefined && now() - failedAt >= shrinkBudgetMs)
        throw new fc.PreconditionFailure(true);
    }
    let ok: unknown;
    try {
      ok = await predicate(value);
    } catch (error) {
      noteFailure();
      throw error;
    }
    if (ok === false) noteFailure();
    else if (failedAt === undefined) runs += 1;
    return ok !== false;
  });
  const noteFailure = () => {
    if (failedAt !== undefined) return;
    failedAt = now();
    // Written before shrinking starts: if the suite is killed mid-shrink, the
    // unshrunk case still replays from this line.
    log(`[${prefix}] case ${runs} failed; shrinking (first failure: ${prefix}_SEED=${seed})`);
  };
  const details = await fc.check(property, {
    seed,
    numRuns,
    ...(path === undefined ? {} : { path }),
  });
  if (details.failed && details.counterexample !== null && details.counterexamplePath !== null) {
    const replay = replayCommand(prefix, seed, details.counterexamplePath, command);
    log(`[${prefix}] failed; replay the smallest case with: ${replay}`);
    throw new ReplayableFailure(
      seed,
      details.counterexamplePath,
      details.counterexample[0],
      replay,
      details.numShrinks,
      details.errorInstance,
    );
  }
  if (details.failed)
    throw new ReplayableFailure(seed, '', undefined, '', 0, details.errorInstance);
  log(`[${prefix}] ${runs} runs passed${outOfTime ? ' (time budget reached)' : ''}`);
  return { seed, path, runs, outOfTime };
}
