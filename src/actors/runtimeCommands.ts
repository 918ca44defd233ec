/**
 * The runtime's commands (`submit`/`createTask`, `cancel`, `retry`,
 * `setUserCap`, `reconcile`) and how their failures reach the caller: every
 * rejection is a `RuntimeCommandError` with the board port's code, or a
 * `RuntimeStoppedError` when the runtime ended before the command ran.
 * Every write is one op of the dispatcher's next tick; the row decides, and
 * a runner is only told afterwards.
 */
import { submissionProblem } from '../board/submission.js';
import {
  isDataException,
  isTransientDbError,
  keyTakenBy,
  NotFoundError,
  newId,
  type Session,
  storeClosedIn,
  type Task,
  ValidationError,
} from '../db/index.js';
import type { TickOutcome } from '../db/tickTypes.js';
import { ReconcilerStoppedError } from '../machines/reconcileLoop.js';
import type { Dispatcher } from './dispatcher.js';
import { DispatcherStoppedError, DispatchUnavailableError } from './dispatcher.js';
import {
  commandStopped,
  endedExit,
  type RuntimeEnding,
  RuntimeStoppedError,
} from './runtimeExit.js';
import { type CreatedTask, type Runtime, RuntimeCommandError } from './runtimeTypes.js';

/** One op as the dispatcher takes it (its `ref` is the dispatcher's). */
export type CommandOp = Parameters<Dispatcher['submit']>[0];

export interface RuntimeCommandsOptions {
  /** Queues one op for the next tick (the dispatcher's `submit`). */
  submit(op: CommandOp): Promise<TickOutcome>;
  /** The task as `actor` may see it (null: the admin); rejects as the store does. */
  readTask(actor: string | null, taskId: string): Promise<Task>;
  /** A task's sessions, oldest attempt first. */
  readSessions(taskId: string): Promise<Session[]>;
  /** Tells `sessionId`'s runner to cancel; false when none runs here. */
  cancelRunner(sessionId: string): boolean;
  /** Removes a run's container (a cancelled run no runner here cleans up). */
  removeRun(run: { sessionId: string; handle: string }): Promise<void>;
  /** A pass of the Reconciler (the tick as an event), or undefined when none runs. */
  requestPass(): Promise<void> | undefined;
  /** The runtime has stopped: commands reject at once. */
  isDead(): boolean;
  /** Which store errors are an outage (the runtime's `isTransient`): those are `unavailable`. */
  isTransient?(error: unknown): boolean;
  /** Who ended the runtime on purpose, once someone did. */
  ending(): RuntimeEnding | undefined;
  onError(error: unknown): void;
  /** A submission was answered (for /metrics): queued, replayed by its key, or a key's conflict. */
  onSubmitted?(outcome: 'queued' | 'replayed' | 'conflict'): void;
  /** The time limit of a submission that gives none (`defaultTimeLimitMs`); null or absent: none. */
  defaultTimeLimitMs?: number | null;
}

export type RuntimeCommands = Pick<
  Runtime,
  'submit' | 'createTask' | 'cancel' | 'retry' | 'setUserCap' | 'reconcile'
>;

/**
 * A command's outcome as the caller sees it: stale is a conflict, not found
 * is not found.
 *
 * @example
 * ```ts
 * appliedOr({ ref: '1', kind: 'stale', actual: { status: 'running', epoch: 2 } }, 'task t') // throws conflict
 * appliedOr({ ref: '1', kind: 'not_found' }, 'task t') // throws not_found
 * ```
 */
export function appliedOr(
  outcome: TickOutcome,
  what: string,
): Extract<TickOutcome, { kind: 'applied' }> {
  if (outcome.kind === 'applied') return outcome;
  if (outcome.kind === 'stale')
    throw new RuntimeCommandError(
      'conflict',
      `${what} moved on (now ${outcome.actual.status}); try again`,
    );
  throw new RuntimeCommandError('not_found', `${what} not found`);
}

/** How many times a cancel follows its session to a newer state before it gives up. */
export const CANCEL_FOLLOWS = 3;

/**
 * What a cancel whose compare-and-set lost does next: a session still live
 * (queued, or running: a grant or an adoption moved it on between the read
 * and the tick) is cancelled again at the state the tick answered; one that
 * ended has nothing left to cancel (null: the caller hears the conflict).
 *
 * @example
 * ```ts
 * cancelAgainAt({ ref: '1', kind: 'stale', actual: { status: 'running', epoch: 1 } }) // => { status: 'running', epoch: 1 }
 * cancelAgainAt({ ref: '1', kind: 'stale', actual: { status: 'succeeded', epoch: 1 } }) // => null
 * cancelAgainAt({ ref: '1', kind: 'not_found' }) // => null
 * ```
 */
export function cancelAgainAt(
  outcome: TickOutcome,
): { status: 'queued' | 'running'; epoch: number } | null {
  if (outcome.kind !== 'stale') return null;
  const { status, epoch } = outcome.actual;
  return status === 'queued' || status === 'running' ? { status, epoch } : null;
}

/** A session's state a cancel can apply at. */
type LiveState = { status: 'queued' | 'running'; epoch: number };

/**
 * Sends a cancel at `expected` and, while the tick answers that a grant or
 * an adoption moved the row on but left it live, again at the state it
 * answered (`cancelAgainAt`), at most `CANCEL_FOLLOWS` times more. The
 * runtime's cancel and the CLI's cancel on the rows (where another node's
 * grant can come between its read and its tick just the same) both go
 * through here. Returns the last outcome and the state it was sent at.
 */
export async function cancelFollowing(
  expected: LiveState,
  send: (expected: LiveState) => Promise<TickOutcome>,
): Promise<{ outcome: TickOutcome; expected: LiveState }> {
  let at = expected;
  for (let follows = 0; ; follows++) {
    const outcome = await send(at);
    const again = follows < CANCEL_FOLLOWS ? cancelAgainAt(outcome) : null;
    if (again === null) return { outcome, expected: at };
    at = again;
  }
}

/**
 * Rethrows a store or dispatcher failure as the caller sees it: bad input
 * is `invalid` (also a value the server refused, SQLSTATE class 22), a
 * missing row `not_found`, a write the runtime stopped before it ran a
 * `RuntimeStoppedError`; a store that did not answer (an outage, a deadline:
 * src/db/transientErrors.ts) or was closed (`StoreClosedError`) is
 * `unavailable`, and any other failure
 * `internal`: retrying later would only repeat it, so it must not read as
 * an outage.
 *
 * @example
 * ```ts
 * commandError(Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' })) // throws unavailable
 * commandError(Object.assign(new Error('invalid input syntax for type json'), { code: '22P02' })) // throws invalid
 * commandError(Object.assign(new Error('syntax error at or near'), { code: '42601' })) // throws internal
 * commandError(new Error('rt_tick answered no outcome for op enqueue #1')) // throws internal
 * ```
 */
export function commandError(
  error: unknown,
  isTransient: (error: unknown) => boolean = isTransientDbError,
  op = 'the command',
): never {
  if (error instanceof RuntimeCommandError) throw error;
  // The runtime stopped with the command's write still waiting: it never ran.
  if (error instanceof DispatcherStoppedError) throw commandStopped('stop', op, error.sent);
  if (error instanceof ValidationError)
    throw new RuntimeCommandError(
      'invalid',
      `invalid ${callerField(error.field)}: ${error.problem}`,
      {
        cause: error,
      },
    );
  if (error instanceof NotFoundError)
    throw new RuntimeCommandError('not_found', error.message, { cause: error });
  // The dispatcher's own words say how long, and whether the op may have been applied.
  if (error instanceof DispatchUnavailableError)
    throw new RuntimeCommandError('unavailable', error.message, { cause: error });
  // The application closed the store under a running node: this node takes
  // nothing more, but another one (or this one, restarted) can.
  const closed = storeClosedIn(error);
  if (closed !== null)
    throw new RuntimeCommandError('unavailable', closed.message, { cause: error });
  if (isTransient(error))
    throw new RuntimeCommandError('unavailable', 'the store did not answer', { cause: error });
  if (isDataException(error))
    throw new RuntimeCommandError('invalid', `the store refused a value: ${messageOf(error)}`, {
      cause: error,
    });
  throw new RuntimeCommandError('internal', 'the store failed on the command (see the node log)', {
    cause: error,
  });
}

/**
 * The field as the caller named it: the tick checks each op as `ops.<index>`
 * of its batch, a place no caller of `submit` or `setUserCap` knows of.
 *
 * @example
 * callerField('ops.0.userId'); // => 'userId'
 * callerField('ops.12.spec.env.A'); // => 'spec.env.A'
 * callerField('title'); // => 'title'
 */
export function callerField(field: string): string {
  return field.replace(/^ops\.\d+\./, '');
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

export function runtimeCommands(o: RuntimeCommandsOptions): RuntimeCommands {
  // The runtime's own judgement of an outage: the one its retries follow.
  // A stop() or kill() that came first is said the same way wherever the
  // command was: called after it, or its write dropped or failing as the
  // node's I/O stopped (`RuntimeStoppedError`, saying whether it may have
  // been applied). A node that gave up (no ending asked) is `unavailable`.
  const failedAs =
    (op: string) =>
    (error: unknown): never => {
      const ending = o.ending();
      if (error instanceof DispatcherStoppedError && ending !== undefined)
        throw commandStopped(ending, op, error.sent);
      if (error instanceof DispatcherStoppedError)
        throw new RuntimeCommandError('unavailable', 'the runtime is stopped', { cause: error });
      return commandError(error, o.isTransient, op);
    };
  const failed = failedAs('the command');
  const alive = (op: string) => {
    const ending = o.ending();
    if (ending !== undefined) throw commandStopped(ending, op, false);
    if (o.isDead()) throw new RuntimeCommandError('unavailable', 'the runtime is stopped');
  };
  const taskFor = async (actor: string | null, taskId: string) => {
    try {
      return await o.readTask(actor, taskId);
    } catch (error) {
      // A malformed id names no task the actor may see.
      if (error instanceof ValidationError) commandError(new NotFoundError('task', taskId));
      return failed(error);
    }
  };
  const latestSession = async (taskId: string): Promise<Session> => {
    const sessions = await o.readSessions(taskId).catch(failed);
    const last = sessions[sessions.length - 1];
    if (last === undefined)
      throw new RuntimeCommandError('not_found', `task ${taskId} has no session`);
    return last;
  };

  /** The submission's own limit, else the node's default, else none. */
  const limitOf = (input: { timeLimitMs?: number }): number | null =>
    input.timeLimitMs ?? o.defaultTimeLimitMs ?? null;

  const submit: Runtime['submit'] = async (userId, input): Promise<CreatedTask> => {
    alive('enqueue');
    // Checked here by the tick's own rules, so the caller hears the field it
    // sent (`env.A`), not where the tick carries it (`ops.0.spec.env.A`).
    const problem = submissionProblem(input);
    if (problem !== null)
      throw new RuntimeCommandError('invalid', `invalid ${problem.field}: ${problem.message}`);
    const limit = limitOf(input);
    const outcome = await o
      .submit({
        op: 'enqueue',
        taskId: newId('task'),
        sessionId: newId('session'),
        userId,
        title: input.title,
        spec: {
          image: input.image,
          command: input.command,
          ...(input.env ? { env: input.env } : {}),
        },
        ...(input.key === undefined ? {} : { key: input.key }),
        ...(limit === null ? {} : { timeLimitMs: limit }),
      })
      .catch(failedAs('enqueue'));
    const taken = keyTakenBy(outcome);
    if (taken !== undefined) {
      o.onSubmitted?.('conflict');
      throw new RuntimeCommandError(
        'conflict',
        `key ${JSON.stringify(input.key)} was submitted with another title or spec: task ${taken}`,
      );
    }
    const done = appliedOr(outcome, 'task');
    if (done.task === null)
      throw new RuntimeCommandError('unavailable', 'the tick returned no task');
    o.onSubmitted?.(done.replayed === true ? 'replayed' : 'queued');
    return {
      task: done.task,
      session: done.session,
      position: done.position ?? 0,
      replayed: done.replayed === true,
    };
  };

  return {
    submit,
    async createTask(userId, input) {
      const { task, session, position, replayed } = await submit(userId, input);
      return { taskId: task.id, sessionId: session.id, position, replayed };
    },
    async cancel(actor, taskId) {
      alive('cancel');
      await taskFor(actor, taskId);
      const s = await latestSession(taskId);
      if (s.status !== 'queued' && s.status !== 'running') {
        throw new RuntimeCommandError('conflict', `task ${taskId} is ${s.status}`);
      }
      // The row decides first (one tick: status, history, column, counts);
      // the runner, if it is here, then only cleans up. A grant (or an
      // adoption) between the read and the tick moves the row on but leaves
      // it live: the cancel follows it, at the state the tick answered.
      const { outcome } = await cancelFollowing({ status: s.status, epoch: s.epoch }, (expected) =>
        o
          .submit({
            op: 'cancel',
            sessionId: s.id,
            expected,
            reason: actor === null ? 'cancelled by admin' : 'cancelled by user',
            column: 'failed',
          })
          .catch(failedAs('cancel')),
      );
      appliedOr(outcome, `task ${taskId}`);
      if (!o.cancelRunner(s.id) && s.handle !== null)
        await o.removeRun({ sessionId: s.id, handle: s.handle }).catch(o.onError);
    },
    async retry(actor, taskId) {
      alive('retry');
      const task = await taskFor(actor, taskId);
      const last = await latestSession(taskId);
      if (last.status !== 'failed' && last.status !== 'cancelled') {
        // Worded as the CLI's own retry words it, so the answer is the same through a node.
        throw new RuntimeCommandError(
          'conflict',
          `task ${taskId} is ${last.status}: only a failed or cancelled task is retried`,
        );
      }
      const outcome = await o
        .submit({
          op: 'retry',
          taskId: task.id,
          actor,
          sessionId: newId('session'),
          expected: { sessionId: last.id, status: last.status, epoch: last.epoch },
        })
        .catch(failedAs('retry'));
      const done = appliedOr(outcome, `task ${taskId}`);
      return { sessionId: done.session.id, position: done.position ?? 0 };
    },
    async setUserCap(userId, maxRunning) {
      alive('cap');
      const outcome = await o.submit({ op: 'cap', userId, maxRunning }).catch(failedAs('cap'));
      if (outcome.kind !== 'cap') appliedOr(outcome, `user ${userId}`);
    },
    reconcile() {
      // Throws, not rejects, on a stopped runtime: as it always has.
      alive('reconcile');
      const pass = o.requestPass();
      if (pass === undefined) {
        return Promise.reject(new RuntimeCommandError('unavailable', 'no reconciler running'));
      }
      // Settles even when the runtime stops during the pass (the loop
      // answers held callers; a stopped actor is watched, like a call).
      return pass.catch((error: unknown) => {
        const ending = o.ending();
        throw error instanceof ReconcilerStoppedError && ending !== undefined
          ? new RuntimeStoppedError(endedExit(ending))
          : error;
      });
    },
  };
}
