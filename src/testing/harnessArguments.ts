/**
 * The harness's own checks of what a test hands it, before anything runs:
 * `createTestRuntime`'s options (an unknown key with the project's "did you
 * mean", the values only the harness reads) and `advance`'s duration. The
 * options it passes on to `createRuntime` are checked there
 * (`RuntimeOptionError`), and the ids it looks runs up by. Pure: no clock,
 * no store.
 */
import { didYouMean } from '../common/didYouMean.js';
import { isId } from '../db/ids.js';

/**
 * A harness call was given something it cannot use: `field` names it as the
 * test wrote it (`pollMS`, `advance.ms`), the message says what it takes.
 */
export class HarnessArgumentError extends Error {
  override readonly name = 'HarnessArgumentError';
  readonly code = 'HARNESS_INVALID_ARGUMENT';
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`harness: ${field} ${problem}`);
  }
}

/** Throws for the first key of `options` not in `known`, with the closest known one. */
function onlyKnownKeys(options: object, known: readonly string[], of: string, prefix: string) {
  for (const key of Object.keys(options)) {
    if (known.includes(key)) continue;
    const near = didYouMean(key, known);
    throw new HarnessArgumentError(
      `${prefix}${key}`,
      `is not an option of ${of}${near ? `; did you mean ${near}?` : ''}`,
    );
  }
}

const isDuration = (v: unknown): v is number =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0;

/** The options only the harness reads (the rest go to `createRuntime`, which checks them). */
export interface HarnessOwnOptions {
  settleTimeoutMs?: number | undefined;
  rescheduleDelayMs?: number | undefined;
  nodes?: readonly string[] | undefined;
}

/**
 * Throws a `HarnessArgumentError` naming the first option the harness cannot
 * use: a key not in `known` (with the closest known one), or a value of the
 * harness's own (`settleTimeoutMs`, `rescheduleDelayMs`, `nodes`) out of
 * range. A key given as `undefined` counts as left out.
 *
 * @example
 * ```ts
 * const known = ['pollMs', 'nodes', 'settleTimeoutMs', 'rescheduleDelayMs']
 * checkTestRuntimeOptions({ pollMs: 5_000, nodes: ['a', 'b'] } as never, known) // => undefined
 * checkTestRuntimeOptions({ pollMs: undefined } as never, known) // => undefined
 * checkTestRuntimeOptions({ pollMS: 5_000 } as never, known) // throws HarnessArgumentError
 * checkTestRuntimeOptions({ colour: 'red' } as never, known) // throws HARNESS_INVALID_ARGUMENT
 * checkTestRuntimeOptions({ settleTimeoutMs: 0 }, known) // throws HarnessArgumentError
 * checkTestRuntimeOptions({ rescheduleDelayMs: Number.NaN }, known) // throws HarnessArgumentError
 * checkTestRuntimeOptions({ nodes: [] }, known) // throws HarnessArgumentError
 * ```
 */
export function checkTestRuntimeOptions(
  options: HarnessOwnOptions,
  known: readonly string[],
): void {
  if (typeof options !== 'object' || options === null)
    throw new HarnessArgumentError('options', 'must be an object (or left out)');
  onlyKnownKeys(options, known, 'createTestRuntime', '');
  const { settleTimeoutMs, rescheduleDelayMs, nodes } = options;
  if (settleTimeoutMs !== undefined && !(isDuration(settleTimeoutMs) && settleTimeoutMs > 0))
    throw new HarnessArgumentError(
      'settleTimeoutMs',
      `must be a number of ms > 0, got ${String(settleTimeoutMs)}`,
    );
  if (rescheduleDelayMs !== undefined && !isDuration(rescheduleDelayMs))
    throw new HarnessArgumentError(
      'rescheduleDelayMs',
      `must be a number of ms >= 0, got ${String(rescheduleDelayMs)}`,
    );
  if (
    nodes !== undefined &&
    !(
      Array.isArray(nodes) &&
      nodes.length > 0 &&
      nodes.every((n) => typeof n === 'string' && n !== '')
    )
  )
    throw new HarnessArgumentError(
      'nodes',
      'must name at least one node (a cluster with none never starts a container)',
    );
}

/**
 * Returns `ms` if `advance` can move the clock by it (a finite number >= 0),
 * else throws a `HarnessArgumentError`: a NaN once made the virtual clock
 * NaN for the rest of the test, and a negative moved nothing, silently.
 *
 * @example
 * ```ts
 * checkAdvanceMs(60_000) // => 60000
 * checkAdvanceMs(0) // => 0
 * checkAdvanceMs(Number.NaN) // throws HarnessArgumentError
 * checkAdvanceMs(-1) // throws HARNESS_INVALID_ARGUMENT
 * checkAdvanceMs(Number.POSITIVE_INFINITY) // throws HarnessArgumentError
 * checkAdvanceMs('5000' as never) // throws HarnessArgumentError
 * ```
 */
export function checkAdvanceMs(ms: number): number {
  if (!isDuration(ms))
    throw new HarnessArgumentError(
      'advance.ms',
      `must be a finite number of ms >= 0 (virtual time only moves forward), got ${typeof ms === 'number' ? String(ms) : typeof ms}`,
    );
  return ms;
}

/**
 * Returns `sessionId` unless it is a task's id (`tsk_...`), which a run
 * lookup (`execLog`) never matches: `expect(h.execLog(taskId)).toHaveLength(1)`
 * failed with "got 0" and, worse, a "never ran twice" check
 * (`toBeLessThanOrEqual(1)`) passed on nothing at all. Any other id passes:
 * a session the cluster never ran has no executions, truly.
 *
 * @example
 * ```ts
 * checkRunLookupId('ses_0123456789abcdef0123456789abcdef') // => 'ses_0123456789abcdef0123456789abcdef'
 * checkRunLookupId('s1') // => 's1'
 * checkRunLookupId('tsk_0123456789abcdef0123456789abcdef') // throws HarnessArgumentError
 * ```
 */
export function checkRunLookupId(sessionId: string): string {
  if (isId('task', sessionId))
    throw new HarnessArgumentError(
      'execLog.sessionId',
      `is a task's id (${sessionId}); pass one of its sessions' ids ` +
        "(createTask's sessionId, a card's sessionId, h.sessions() filtered by taskId)",
    );
  return sessionId;
}

/** What `addNode` takes (src/testing/harnessNodes.ts). */
const ADD_NODE_KEYS = ['nodeId', 'caps', 'localMax', 'runnerImage'];

/**
 * Throws a `HarnessArgumentError` unless `options` is what `addNode` takes:
 * an object naming the node (`nodeId`), with no key it does not know (the
 * values it passes on are `createRuntime`'s to check).
 *
 * @example
 * ```ts
 * checkAddNodeOptions({ nodeId: 'node-b' }) // => undefined
 * checkAddNodeOptions({ nodeId: 'node-b', localMax: 2 }) // => undefined
 * checkAddNodeOptions({}) // throws HarnessArgumentError
 * checkAddNodeOptions({ nodeId: '' }) // throws HarnessArgumentError
 * checkAddNodeOptions(undefined) // throws HarnessArgumentError
 * checkAddNodeOptions({ nodeId: 'b', nodeID: 'c' }) // throws HARNESS_INVALID_ARGUMENT
 * ```
 */
export function checkAddNodeOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null)
    throw new HarnessArgumentError('addNode', 'takes { nodeId } at least');
  onlyKnownKeys(options, ADD_NODE_KEYS, 'addNode', 'addNode.');
  const { nodeId } = options as { nodeId?: unknown };
  if (typeof nodeId !== 'string' || nodeId === '')
    throw new HarnessArgumentError('addNode.nodeId', 'must name the node (a non-empty string)');
}
