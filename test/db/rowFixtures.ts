/**
 * A `sessions` row as the store returns it, for the row readers' tests:
 * `at` is every set timestamp (a Date from pg, an ISO text from to_jsonb).
 */
import { newId } from '../../src/db/ids.js';

export function sessionRowAt<T>(at: T) {
  return {
    id: newId('session'),
    task_id: newId('task'),
    user_id: 'alice',
    kind: 'run',
    status: 'running',
    attempt: 1,
    enqueued_at: at,
    claimed_at: at,
    backend: 'swarm',
    handle: 'rt-x',
    owner_node: 'node-a',
    epoch: 1,
    started_at: null,
    finished_at: null,
    exit_code: null,
    failure_reason: null,
    user_recoverable: false,
    updated_at: at,
  };
}
