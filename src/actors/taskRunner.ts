/**
 * The TaskRunner actor: the pure `taskRunnerMachine` with its I/O provided
 * (rows, the node's slots, the container backend). Every write is fenced by
 * the row's epoch: a runner only ever writes the epoch its grant or adopt
 * produced, so a deposed owner's late write is a stale outcome instead of a
 * second finish. Writes ride the dispatcher's next tick (handles, finishes);
 * the adopt CAS and the reads are direct, retried while the store is down.
 */
import { fromCallback, fromPromise } from 'xstate';
import type { ContainerBackend, RunOutput, RunRef } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';
import {
  adopt,
  type Db,
  getSession,
  newId,
  type Session,
  StaleStatusError,
  type Task,
} from '../db/index.js';
import type { TickFinish, TickHandle, TickOutcome } from '../db/tickTypes.js';
import { type AttachEvent, containerRunMachine } from '../machines/containerRun.js';
import type { ContainerRunError } from '../machines/containerRunTypes.js';
import {
  type AdoptResult,
  type RunnerOutcome,
  type RunnerRow,
  taskRunnerMachine,
} from '../machines/taskRunner.js';
import type { Watchable } from '../supervisor/watchExit.js';
import type { DispatchClock } from './dispatcher.js';
import { DispatchUnavailableError } from './dispatcher.js';
import { retryTransient } from './retryTransient.js';

/** The node's slots as a runner sees them: writes through the next tick, and the held slot. */
export interface RunnerSlots {
  submit(op: Omit<TickHandle, 'ref'> | Omit<TickFinish, 'ref'>): Promise<TickOutcome>;
  /** This runner holds `sessionId` at `epoch` (monitored: its DOWN releases the slot). */
  hold(sessionId: string, epoch: number, holder: Watchable): void;
  /** Done with it. Idempotent. */
  release(sessionId: string): void;
}

/** What a run that could not start means for its session (src/machines/startFailurePolicy.ts decides). */
export type StartFailure =
  | { action: 'requeue'; reason: string }
  | { action: 'fail'; reason: string; userRecoverable: boolean };

/** Everything a TaskRunner touches, handed in by the runtime. */
export interface TaskRunnerDeps {
  db: Db;
  backend: ContainerBackend;
  slots: RunnerSlots;
  /** The owner this boot writes on rows. */
  owner: string;
  clock: DispatchClock;
  isTransient(error: unknown): boolean;
  /** How long a runner keeps trying a read or a write while the store is down. */
  storeDeadlineMs: number;
  /** Live output of a run this boot started. */
  onOutput(sessionId: string, chunk: string): void;
  /**
   * A write returned this task's new rows: the board shows them with no read.
   * `outputShown`: the run's whole output went through `onOutput` already.
   */
  onRows(session: Session, task?: Task | null, outputShown?: boolean): void;
  /** The rows a tick granted this session with, taken once; else undefined (a restart, an adoption). */
  grantOf(sessionId: string): { session: Session; task: Task } | undefined;
  /**
   * The row the Reconciler already fenced for this boot (a batched adopt),
   * taken once: the runner goes on from it with no read and no CAS of its own.
   */
  fencedOf?(sessionId: string): Session | undefined;
  /**
   * Whether this boot may fence the owner now on `session`'s row: its own
   * row, or an owner the liveness decision says is gone. Default: yes.
   */
  mayAdopt?(session: Session): Promise<boolean>;
  /** A start that failed: what to do with the session (and tells the runtime the engine may be down). */
  onStartFailure(error: ContainerRunError, session: Session): StartFailure;
  /** A give-up or a start failure queued a new attempt (counted for /metrics). */
  onRequeued(reason: string): void;
  /** Errors that must be seen but must not crash the runner (a failed removal). */
  onError(error: unknown): void;
  /** Counts in-flight I/O, so the harness knows when the system is settled. */
  track<T>(work: Promise<T>): Promise<T>;
}

/** Throws when the actor was stopped meanwhile: a killed runner writes nothing more. */
function alive(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('taskRunner stopped');
}

const MAX_REASON = 1000;

/** The TaskRunner logic for one runtime; start it with input `TaskRunnerInput`. */
export function taskRunnerLogic(deps: TaskRunnerDeps) {
  const { db, backend, slots } = deps;
  const now = () => new Date(deps.clock.now());
  const ref = (sessionId: string, handle: string): RunRef => ({ sessionId, handle });
  const retry = <T>(work: () => Promise<T>, signal?: AbortSignal) =>
    retryTransient(work, {
      clock: deps.clock,
      // An op the dispatcher could not get committed in time is sent again:
      // ops are idempotent, and the store's outage is a condition, not a bug.
      isTransient: (e) => e instanceof DispatchUnavailableError || deps.isTransient(e),
      baseMs: 100,
      maxMs: 2_000,
      deadlineMs: deps.storeDeadlineMs,
      ...(signal ? { signal } : {}),
    });
  /** A write through the tick, sent again while the store does not answer (ops are idempotent). */
  const submit = (op: Omit<TickHandle, 'ref'> | Omit<TickFinish, 'ref'>) =>
    retry(() => slots.submit(op));
  /**
   * Characters of each run's output this boot already streamed to the board.
   * An adopted run streamed none here: finalize hands the board the rest of
   * the complete output it read.
   */
  const streamed = new Map<string, number>();
  /** The output each run's finalize stores on its row (as the backend read it, uncut by us). */
  const outputs = new Map<string, RunOutput>();
  /**
   * Each session's row as this boot's grant, adopt or write returned it.
   * Only a write of ours moves a row we own on (every later write is fenced
   * by its epoch), so reading it back would only tell us what we know.
   */
  const rows = new Map<string, Session>();
  /** Each granted session's task: the run spec. */
  const specs = new Map<string, Task>();
  /** Where each run lives, once started (the handle op may still be on its way). */
  const handles = new Map<string, string>();
  /** Rows fenced by the Reconciler, from `loadRow` to the adopt step. */
  const prefenced = new Map<string, Session>();
  const forget = (sessionId: string) => {
    streamed.delete(sessionId);
    outputs.delete(sessionId);
    rows.delete(sessionId);
    specs.delete(sessionId);
    handles.delete(sessionId);
  };

  const containerRun = containerRunMachine.provide({
    actors: {
      startRun: fromPromise(({ input, signal }) =>
        deps.track(
          (async () => {
            const s = rows.get(input.sessionId);
            const task = specs.get(input.sessionId);
            if (s === undefined || task === undefined)
              throw new StaleStatusError(
                input.sessionId,
                { status: 'running', epoch: -1 },
                { status: 'unknown', epoch: -1 },
              );
            alive(signal);
            const started = await backend.start({
              sessionId: s.id,
              image: task.spec.image,
              command: task.spec.command,
              ...(task.spec.env ? { env: task.spec.env } : {}),
              labels: { 'roundtable.user': s.userId, 'roundtable.task': s.taskId },
            });
            handles.set(s.id, started.handle);
            // Rides the next tick; not awaited, so the run's output is not
            // held up by a commit. A finish sent later is applied after it
            // (a tick applies handles before finishes), and a crash before
            // it commits leaves a running row with no handle: an orphan the
            // Reconciler fails and re-queues.
            void submit({
              op: 'handle',
              sessionId: s.id,
              epoch: s.epoch,
              backend: backend.kind,
              handle: started.handle,
              startedAt: started.startedAt ?? null,
            }).then((outcome) => {
              if (outcome.kind === 'applied') rows.set(s.id, outcome.session);
            }, deps.onError);
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

  /** The finish op for an outcome: exit, give-up (re-queued at the head of the line), start failure. */
  const finishFor = (s: Session, outcome: RunnerOutcome): Omit<TickFinish, 'ref'> => {
    const base = { op: 'finish' as const, sessionId: s.id, epoch: s.epoch };
    if (outcome.outcome === 'exited') {
      const ok = outcome.exitCode === 0;
      const read = outputs.get(s.id);
      return {
        ...base,
        status: ok ? 'succeeded' : 'failed',
        exitCode: outcome.exitCode,
        // The command itself said no: running it again as is would say no
        // again. Only a give-up of the infrastructure is recoverable.
        reason: ok ? null : 'exit_code',
        userRecoverable: false,
        output: read ?? {
          text: outcome.output,
          totalBytes: Buffer.byteLength(outcome.output, 'utf8'),
          truncated: false,
        },
        column: ok ? 'done' : 'failed',
        requeue: null,
      };
    }
    const giveUp = (reason: string): Omit<TickFinish, 'ref'> => ({
      ...base,
      status: 'failed',
      exitCode: null,
      reason,
      userRecoverable: true,
      output: null,
      column: 'queued',
      requeue: { sessionId: newId('session') },
    });
    if (outcome.outcome === 'gave_up') return giveUp(outcome.reason);
    if (outcome.outcome === 'orphaned') return giveUp('owner_lost');
    const decided = deps.onStartFailure(outcome.error, s);
    if (decided.action === 'requeue') return giveUp(decided.reason.slice(0, MAX_REASON));
    return {
      ...base,
      status: 'failed',
      exitCode: outcome.exitCode,
      reason: decided.reason.slice(0, MAX_REASON),
      userRecoverable: decided.userRecoverable,
      output: null,
      column: 'failed',
      requeue: null,
    };
  };

  const finalize = async (
    sessionId: string,
    outcome: RunnerOutcome,
  ): Promise<'finished' | 'gone'> => {
    const seen = streamed.get(sessionId) ?? 0;
    const s = rows.get(sessionId);
    const handle = handles.get(sessionId) ?? s?.handle ?? null;
    forget(sessionId);
    if (s === undefined) return 'gone';
    if (outcome.outcome === 'exited' && outcome.output.length > seen)
      deps.onOutput(sessionId, outcome.output.slice(seen));
    const op = finishFor(s, outcome);
    const result = await submit(op);
    if (result.kind !== 'applied') return 'gone';
    deps.onRows(result.session, result.task, op.output !== null);
    if (result.next !== undefined) {
      deps.onRequeued(op.reason ?? 'requeued');
      deps.onRows(result.next.session, result.task);
    }
    // The run is over and recorded: its service is garbage. A failed removal
    // is reported; the Reconciler's stale-handle sweep tries again.
    if (handle !== null) await backend.remove(ref(sessionId, handle)).catch(deps.onError);
    return 'finished';
  };

  /** A row this boot fenced: the runner holds its slot and shows it. */
  const took = (fenced: Session, holder: Watchable, signal: AbortSignal): AdoptResult => {
    // Cancelled while the CAS was out: the cancel's own CAS decides the row;
    // this runner is gone and must not hold anything.
    if (signal.aborted) return { kind: 'gone' };
    rows.set(fenced.id, fenced);
    if (fenced.handle !== null) handles.set(fenced.id, fenced.handle);
    slots.hold(fenced.id, fenced.epoch, holder);
    deps.onRows(fenced);
    return { kind: 'adopted', handle: fenced.handle, startedAt: fenced.startedAt };
  };

  return taskRunnerMachine.provide({
    actors: {
      loadRow: fromPromise(({ input, signal }) =>
        deps.track(
          (async (): Promise<RunnerRow> => {
            const grant = deps.grantOf(input.sessionId);
            if (grant !== undefined) {
              rows.set(grant.session.id, grant.session);
              specs.set(grant.session.id, grant.task);
              return { kind: 'run' };
            }
            const fenced = deps.fencedOf?.(input.sessionId);
            if (fenced !== undefined) {
              prefenced.set(fenced.id, fenced);
              return { kind: 'adopt' };
            }
            const s = await retry(() => getSession(db, input.sessionId), signal);
            if (s.status !== 'running') return { kind: 'gone' };
            // Adopt only what is ours to adopt: an orphan the Reconciler
            // judged dead, or our own run after this runner crashed. Any
            // other running row belongs to a live owner: leave it alone.
            return input.start === 'adopt' || s.owner === deps.owner
              ? { kind: 'adopt' }
              : { kind: 'gone' };
          })(),
        ),
      ),
      adopt: fromPromise(({ input, signal }) =>
        deps.track(
          (async (): Promise<AdoptResult> => {
            const pre = prefenced.get(input.sessionId);
            prefenced.delete(input.sessionId);
            // Fenced by the Reconciler's batch (only the dead, by epoch): ours at that epoch.
            if (pre !== undefined) return took(pre, input.holder, signal);
            const s = await retry(() => getSession(db, input.sessionId), signal);
            if (s.status !== 'running') return { kind: 'gone' };
            // Adopt only the dead: the row may have moved to a live owner since the Reconciler looked.
            if (deps.mayAdopt !== undefined && !(await deps.mayAdopt(s))) return { kind: 'gone' };
            alive(signal);
            try {
              // The epoch moves on: the previous owner, wherever it is, is fenced out.
              const fenced = await retry(
                () => adopt(db, { sessionId: s.id, epoch: s.epoch, owner: deps.owner, now: now() }),
                signal,
              );
              return took(fenced, input.holder, signal);
            } catch (error) {
              if (error instanceof StaleStatusError) return { kind: 'gone' };
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
            const handle = handles.get(input.sessionId) ?? input.handle;
            forget(input.sessionId);
            if (handle !== null)
              await backend.remove(ref(input.sessionId, handle)).catch(deps.onError);
          })(),
        ),
      ),
    },
    actions: {
      hold: ({ self }, params) => {
        const s = rows.get(params.sessionId);
        if (s !== undefined) slots.hold(params.sessionId, s.epoch, self);
      },
      releaseSlot: (_, params) => slots.release(params.sessionId),
    },
  });
}

/** A start failure's engine error code, when the backend said one. */
export function engineCodeOf(error: ContainerRunError): string | null {
  if (error.code === 'START_TIMED_OUT') return 'timeout';
  const cause = (error as { cause?: unknown }).cause;
  return isContainerError(cause) ? cause.code : null;
}
