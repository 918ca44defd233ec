/**
 * The TaskRunner actor: the pure `taskRunnerMachine` with its I/O provided
 * (rows, the slot pool, the container backend). Every write is fenced by the
 * row's epoch: a runner only ever writes the epoch its own claim or adopt
 * produced, so a deposed owner's late write fails as a stale status instead
 * of finishing a session twice.
 */
import { fromCallback, fromPromise } from 'xstate';
import type { ContainerBackend, RunOutput, RunRef } from '../containers/ContainerBackend.js';
import {
  adopt,
  claimWithinCaps,
  type Db,
  finish,
  finishRun,
  getSession,
  getTask,
  inTransaction,
  recordHandle,
  type Session,
  StaleStatusError,
  type Task,
  updateTaskColumn,
} from '../db/index.js';
import type { GiveUpReason } from '../machines/adoptPolicy.js';
import { type AttachEvent, containerRunMachine } from '../machines/containerRun.js';
import {
  type AdoptResult,
  type ClaimResult,
  type RunnerOutcome,
  type RunnerRow,
  taskRunnerMachine,
} from '../machines/taskRunner.js';
import type { SlotPool } from './runtimePool.js';
import { failAndRequeue } from './runtimeRequeue.js';
import type { RuntimeCaps } from './runtimeTypes.js';

/** Everything a TaskRunner touches, handed in by the runtime. */
export interface TaskRunnerDeps {
  db: Db;
  backend: ContainerBackend;
  pool: SlotPool;
  /** The owner this boot writes on rows. */
  owner: string;
  caps: RuntimeCaps;
  now: () => number;
  /** Live output of a run this boot started. */
  onOutput(sessionId: string, chunk: string): void;
  /** A row of this task changed and was not returned to us (board refresh). */
  onChanged(taskId: string): void;
  /**
   * A write returned this task's new rows: the board shows them with no read.
   * `outputShown`: the run's whole output went through `onOutput` already.
   */
  onRows(session: Session, task?: Task, outputShown?: boolean): void;
  /** The rows the runtime just wrote for a session it starts a runner for, once; else undefined. */
  freshRow(sessionId: string): { session: Session; task?: Task } | undefined;
  /** A give-up queued a new attempt: start its runner. */
  onRequeued(session: Session, task: Task, reason: GiveUpReason | 'owner_lost'): void;
  /** Errors that must be seen but must not crash the runner (a failed removal). */
  onError(error: unknown): void;
  /** Counts in-flight I/O, so the harness knows when the system is settled. */
  track<T>(work: Promise<T>): Promise<T>;
}

/** Throws when the actor was stopped meanwhile: a killed runner writes nothing more. */
function alive(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('taskRunner stopped');
}

const isStale = (e: unknown) => e instanceof StaleStatusError;

/** The TaskRunner logic for one runtime; start it with input `TaskRunnerInput`. */
export function taskRunnerLogic(deps: TaskRunnerDeps) {
  const { db, backend, pool } = deps;
  const now = () => new Date(deps.now());
  const ref = (sessionId: string, handle: string): RunRef => ({ sessionId, handle });
  /**
   * Characters of each run's output this boot already streamed to the board.
   * An adopted run streamed none here: finalize hands the board the rest of
   * the complete output it read, or the card of a run that survived a deploy
   * would end with no output at all.
   */
  const streamed = new Map<string, number>();
  /** The output each run's finalize stores on its row (as the backend read it, uncut by us). */
  const outputs = new Map<string, RunOutput>();
  /**
   * Each session's row as this boot's last read or write of it returned it.
   * Only a write of ours moves a row we own on (every later write is fenced
   * by its epoch), so reading it back would only tell us what we know; if
   * another node moved it meanwhile, our next fenced write fails as stale,
   * exactly as it would after a fresh read that came a moment too early.
   */
  const rows = new Map<string, Session>();
  /** Each session's task as the runtime's write returned it: for the run spec, which never changes. */
  const specs = new Map<string, Task>();

  /** The row, if this boot still owns it while running. */
  const ownedRow = async (sessionId: string): Promise<Session | null> => {
    const s = rows.get(sessionId) ?? (await getSession(db, sessionId));
    return s.status === 'running' && s.owner === deps.owner ? s : null;
  };

  const containerRun = containerRunMachine.provide({
    actors: {
      startRun: fromPromise(({ input, signal }) =>
        deps.track(
          (async () => {
            const s = await ownedRow(input.sessionId);
            if (s === null)
              throw new StaleStatusError(
                input.sessionId,
                { status: 'running', epoch: -1 },
                { status: 'moved', epoch: -1 },
              );
            const task = specs.get(s.id) ?? (await getTask(db, s.taskId));
            specs.delete(s.id);
            alive(signal);
            const started = await backend.start({
              sessionId: s.id,
              image: task.spec.image,
              command: task.spec.command,
              ...(task.spec.env ? { env: task.spec.env } : {}),
              labels: { 'roundtable.user': s.userId, 'roundtable.task': s.taskId },
            });
            alive(signal);
            const recorded = await recordHandle(db, {
              sessionId: s.id,
              epoch: s.epoch,
              backend: backend.kind,
              handle: started.handle,
              startedAt: started.startedAt,
              now: now(),
            });
            rows.set(s.id, recorded);
            deps.onRows(recorded);
            return started;
          })(),
        ),
      ),
      attach: fromCallback<AttachEvent, RunRef>(({ sendBack, input }) => {
        const abort = new AbortController();
        let open = true;
        const send = (e: AttachEvent) => {
          if (open) sendBack(e);
        };
        // Not tracked: attach waits on virtual time, it is not I/O in flight.
        backend
          .attach(input, {
            signal: abort.signal,
            onOutput: (chunk) => {
              if (!open) return;
              streamed.set(input.sessionId, (streamed.get(input.sessionId) ?? 0) + chunk.length);
              deps.onOutput(input.sessionId, chunk);
              send({ type: 'output', chunk });
            },
          })
          .then(
            (exit) => send({ type: 'exited', exitCode: exit.exitCode }),
            (error: unknown) => send({ type: 'attach_failed', error }),
          );
        return () => {
          open = false;
          abort.abort();
        };
      }),
      observe: fromPromise(({ input }) =>
        deps.track(
          backend.observe(input).then((o) => ({
            containerStartedAt: o.containerStartedAt,
            marker: o.marker,
          })),
        ),
      ),
      readOutput: fromPromise(({ input }) =>
        deps.track(
          backend.readOutput(input).then((o) => {
            outputs.set(input.sessionId, o);
            // Cut output is marked, never silent (DESIGN.md).
            return o.truncated
              ? `[roundtable: output cut to its last ${o.text.length} characters]\n${o.text}`
              : o.text;
          }),
        ),
      ),
    },
  });

  const finalize = async (
    sessionId: string,
    outcome: RunnerOutcome,
  ): Promise<'finished' | 'gone'> => {
    const seen = streamed.get(sessionId) ?? 0;
    streamed.delete(sessionId);
    const read = outputs.get(sessionId);
    outputs.delete(sessionId);
    const s = await ownedRow(sessionId);
    rows.delete(sessionId);
    specs.delete(sessionId);
    if (s === null) return 'gone';
    const at = now();
    /** The rows the finish returned; null: it did not happen (stale). */
    let after: { session: Session; task: Task; outputShown: boolean } | null = null;
    /** The session's status change and its card's column, one commit. */
    const withColumn = (column: string, write: (tx: Db) => Promise<Session>) =>
      inTransaction(db, async (tx) => {
        const session = await write(tx);
        const task = await updateTaskColumn(tx, {
          userId: s.userId,
          taskId: s.taskId,
          column,
          now: at,
        });
        return { session, task };
      });
    try {
      if (outcome.outcome === 'gave_up' || outcome.outcome === 'orphaned') {
        const reason = outcome.outcome === 'gave_up' ? outcome.reason : 'owner_lost';
        const next = await withColumn('queued', (tx) => failAndRequeue(tx, s, reason, at));
        after = { ...next, outputShown: false };
        deps.onRequeued(next.session, next.task, reason);
      } else if (outcome.outcome === 'exited') {
        if (outcome.output.length > seen) deps.onOutput(sessionId, outcome.output.slice(seen));
        const ok = outcome.exitCode === 0;
        // The finish, its output and the card's column: one statement.
        const done = await finishRun(
          db,
          ok
            ? { sessionId, epoch: s.epoch, status: 'succeeded', exitCode: 0, now: at }
            : {
                sessionId,
                epoch: s.epoch,
                status: 'failed',
                exitCode: outcome.exitCode,
                reason: 'exit_code',
                // The command itself said no: running it again as is would say
                // no again. Only a give-up of the infrastructure is recoverable.
                userRecoverable: false,
                now: at,
              },
          read ?? {
            text: outcome.output,
            totalBytes: Buffer.byteLength(outcome.output, 'utf8'),
            truncated: false,
          },
          ok ? 'done' : 'failed',
        );
        after = { ...done, outputShown: true };
      } else {
        const failed = await withColumn('failed', (tx) =>
          finish(tx, {
            sessionId,
            epoch: s.epoch,
            status: 'failed',
            exitCode: outcome.exitCode,
            reason: outcome.error.code.toLowerCase(),
            userRecoverable: true,
            now: at,
          }),
        );
        after = { ...failed, outputShown: false };
      }
    } catch (error) {
      if (isStale(error)) return 'gone';
      throw error;
    } finally {
      if (after === null) deps.onChanged(s.taskId);
      else deps.onRows(after.session, after.task, after.outputShown);
    }
    // The run is over and recorded: its service is garbage. A failed removal
    // is reported; the Reconciler's stale-handle sweep tries again.
    if (s.handle !== null) {
      await backend.remove(ref(sessionId, s.handle)).catch(deps.onError);
    }
    return 'finished';
  };

  return taskRunnerMachine.provide({
    actors: {
      loadRow: fromPromise(({ input }) =>
        deps.track(
          (async (): Promise<RunnerRow> => {
            const fresh = deps.freshRow(input.sessionId);
            const s = fresh?.session ?? (await getSession(db, input.sessionId));
            rows.set(s.id, s);
            if (fresh?.task !== undefined) specs.set(s.id, fresh.task);
            return { status: s.status, handle: s.handle };
          })(),
        ),
      ),
      enqueue: fromPromise(async ({ input }) =>
        pool.enqueue(input.userId, input.sessionId, input.waiter),
      ),
      claim: fromPromise(({ input, signal }) =>
        deps.track(
          (async (): Promise<ClaimResult> => {
            alive(signal);
            const outcome = await claimWithinCaps(db, {
              owner: deps.owner,
              now: now(),
              globalCap: deps.caps.maxRunning,
              defaultUserCap: deps.caps.defaultUserCap,
              sessionId: input.sessionId,
            });
            if (outcome.kind === 'claimed') {
              rows.set(outcome.session.id, outcome.session);
              deps.onRows(outcome.session);
              return { kind: 'claimed' };
            }
            if (outcome.kind === 'not_queued' || outcome.kind === 'none_eligible')
              return { kind: 'gone' };
            return { kind: 'at_cap' };
          })(),
        ),
      ),
      adopt: fromPromise(({ input, signal }) =>
        deps.track(
          (async (): Promise<AdoptResult> => {
            const s = await getSession(db, input.sessionId);
            if (s.status !== 'running') return { kind: 'gone' };
            alive(signal);
            try {
              // The epoch moves on: the previous owner, wherever it is, is fenced out.
              const fenced = await adopt(db, {
                sessionId: s.id,
                epoch: s.epoch,
                owner: deps.owner,
                now: now(),
              });
              rows.set(fenced.id, fenced);
              pool.hold(input.userId, input.sessionId, input.waiter);
              deps.onRows(fenced);
              return { kind: 'adopted', handle: fenced.handle, startedAt: fenced.startedAt };
            } catch (error) {
              if (isStale(error)) return { kind: 'gone' };
              throw error;
            }
          })(),
        ),
      ),
      containerRun,
      finalize: fromPromise(({ input }) => deps.track(finalize(input.sessionId, input.outcome))),
      stopRun: fromPromise(({ input }) =>
        deps.track(
          (async () => {
            streamed.delete(input.sessionId);
            outputs.delete(input.sessionId);
            rows.delete(input.sessionId);
            specs.delete(input.sessionId);
            const s = await getSession(db, input.sessionId);
            const handle = s.handle ?? input.handle;
            deps.onChanged(s.taskId);
            if (handle !== null) await backend.remove(ref(s.id, handle)).catch(deps.onError);
          })(),
        ),
      ),
    },
    actions: {
      releaseSlot: (_, params) => pool.release(params.sessionId),
      reloadPool: () => pool.reload(),
      rejoin: ({ self }, params) => pool.hold(params.userId, params.sessionId, self),
    },
  });
}
