/**
 * What a periodic loop over the store (heartbeats, Reconciler passes, the
 * liveness watch, the tick feed's poll, the board's watch flag, live
 * output) does after one of its rounds failed. An outage (a restart, a
 * failover, a deadline) ends: the loop reports it and goes on, so the node
 * rides it out. A store the application closed under the running node
 * (`store.close()` or `store.db.destroy()` before `runtime.stop()`) never
 * answers again: the loop halts for good, after reporting it once, rather
 * than failing every period until `stop()`. One decision for every loop, so
 * none can tell the two apart differently. `stop()` ends a halted loop as
 * it ends a running one.
 */
import { storeClosedIn } from '../db/errors.js';

/** `retry`: at the next period, as in an outage; `halt`: never again (the store is closed). */
export type StoreFailureFate = 'retry' | 'halt';

/**
 * The fate of a loop whose round failed with `error`: `halt` when a
 * `StoreClosedError` is in it (under `cause`, or a member of an
 * `AggregateError`: a pass whose unlock failed too), else `retry`.
 *
 * @example
 * ```ts
 * afterStoreFailure(new StoreClosedError('pglite')) // => 'halt'
 * afterStoreFailure(new Error('beat failed', { cause: new StoreClosedError('postgres') })) // => 'halt'
 * afterStoreFailure(new AggregateError([new Error('pass'), new StoreClosedError('pglite')])) // => 'halt'
 * afterStoreFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })) // => 'retry'
 * afterStoreFailure(new DbTimeoutError('client', 'no answer')) // => 'retry'
 * afterStoreFailure(new Error('a bug')) // => 'retry'
 * ```
 */
export function afterStoreFailure(error: unknown): StoreFailureFate {
  return storeClosedIn(error) === null ? 'retry' : 'halt';
}
