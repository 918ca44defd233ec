/**
 * One op through a tick of the CLI's own, for a command that writes the
 * rows with no node running: owner `cli` (CLI_TICK_OWNER), no grants for itself. The tick
 * decides it like any node's write: a place in line, a compare-and-set, one
 * commit.
 *
 * A tick writes its caps into the dispatch state, and this one grants
 * nothing, so it sends the caps already in force: `enqueue` run with none of
 * the nodes' cap flags must not change what `status` shows or which lines
 * the next `grantable` notice counts as eligible. Only until a node has
 * ticked (a store no node ran on yet) are the configured caps (the settings
 * `start` reads) the ones written. Caps are a node's setting: every granting tick applies its
 * own before it grants, so a stale pair here never lets a grant through.
 */
import {
  CLI_TICK_OWNER,
  type Db,
  readEnforcedCaps,
  type TickOp,
  type TickOutcome,
  tick,
} from '../db/index.js';
import type { CliConfig } from './cliConfig.js';
import { CliError } from './exitCodes.js';

export async function rowsTick(
  db: Db,
  config: Pick<CliConfig, 'caps'>,
  op: TickOp,
): Promise<TickOutcome> {
  const inForce = await readEnforcedCaps(db);
  const done = await tick(db, {
    owner: CLI_TICK_OWNER,
    now: new Date(),
    globalCap: inForce?.globalCap ?? config.caps.maxRunning,
    defaultUserCap: inForce?.defaultUserCap ?? config.caps.defaultUserCap,
    want: 0,
    ops: [op],
  });
  const outcome = done.outcomes.find((o) => o.ref === op.ref);
  if (outcome === undefined)
    throw new CliError('CLI_STORE', `the store gave no answer to the ${op.op}`);
  return outcome;
}

/**
 * The outcome when the op applied; otherwise the error a command exits
 * with, worded as the node's API words its refusals.
 *
 * @example
 * ```ts
 * appliedOrExit({ ref: '1', kind: 'not_found' }, 'task t1') // throws CLI_NOT_FOUND
 * appliedOrExit({ ref: '1', kind: 'stale', actual: { status: 'succeeded', epoch: 1 } }, 'task t1') // throws CLI_CONFLICT
 * ```
 */
export function appliedOrExit(
  outcome: TickOutcome,
  what: string,
): Extract<TickOutcome, { kind: 'applied' }> {
  if (outcome.kind === 'applied') return outcome;
  if (outcome.kind === 'stale') {
    throw new CliError(
      'CLI_CONFLICT',
      `${what} moved on (now ${outcome.actual.status}); try again`,
    );
  }
  if (outcome.kind === 'not_found') throw new CliError('CLI_NOT_FOUND', `${what} not found`);
  throw new CliError('CLI_STORE', `the store answered ${what} with a ${outcome.kind} outcome`);
}
