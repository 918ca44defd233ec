/**
 * The TaskRunner actor: the pure `taskRunnerMachine` with its I/O provided
 * (rows, the node's slots, the container backend). Each I/O action of the
 * two charts starts its call here and sends the answer back to the chart as
 * its `.done` / `.error` event (no actor per call). Every write is fenced by
 * the row's epoch: a runner only ever writes the epoch its grant or adopt
 * produced, so a deposed owner's late write is a stale outcome instead of a
 * second finish. Writes ride the dispatcher's next tick (handles, finishes);
 * the adopt CAS and the reads are direct, retried while the store is down.
 */
import type { AnyActorRef } from 'xstate';
import type { RunRef } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';
import { adopt, getSession, type Session, StaleStatusError } from '../db/index.js';
import type { TickFinish, TickHandle } from '../db/tickTypes.js';
import { timeLimitsOf } from '../db/timeLimit.js';
import type { ContainerRunError } from '../machines/containerRunTypes.js';
import {
  type AdoptResult,
  type RunnerOutcome,
  type RunnerRow,
  type TaskRunnerEvent,
  taskRunnerMachine,
} from '../machines/taskRunner.js';
import type { Watchable } from '../supervisor/watchExit.js';
import { DispatchUnavailableError } from './dispatcher.js';
import { retryTransient } from './retryTransient.js';
import { runnerContainerRun } from './runnerContainerRun.js';
import { finishFor } from './runnerFinish.js';
import { settleFollow } from './runnerStreams.js';
import { msLeft, timedOutFinish } from './runTimeLimit.js';
import {
  alive,
  answerWith,
  newRun,
  RUN_ENDED,
  type RunState,
  type TaskRunnerDeps,
  tell,
} from './taskRunnerDeps.js';

export type { StartFailure } from './runnerFinish.js';
export type { RunnerSlots, TaskRunnerDeps } from './taskRunnerDeps.js';

/** The TaskRunner logic for one runtime; start it with input `TaskRunnerInput`. */
export function taskRunnerLogic(deps: TaskRunnerDeps) {
  const { db, backend, slots } = deps;
  const now = () => new Date(deps.clock.now());
  const ref = (sessionId: string, handle: string): RunRef => ({ sessionId, handle });
  // Built once: every handle, finish and read of every run goes through it.
  const retryOptions = {
    clock: deps.clock,
    // An op the dispatcher could not get committed in time is sent again:
    // ops are idempotent, and the store's outage is a condition, not a bug.
    isTransient: (e: unknown) => e instanceof DispatchUnavailableError || deps.isTransient(e),
    baseMs: 100,
    maxMs: 2_000,
    deadlineMs: deps.storeDeadlineMs,
  };
  const retry = <T>(work: () => Promise<T>, signal?: AbortSignal) =>
    retryTransient(work, signal ? { ...retryOptions, signal } : retryOptions);
  /** A write through the tick, sent again while the store does not answer (ops are idempotent). */
  const submit = (op: Omit<TickHandle, 'ref'> | Omit<TickFinish, 'ref'>) =>
    retry(() => slots.submit(op));

  /** Each session's run, begun by its runner's first step. */
  const runs = new Map<string, RunState>();
  const close = (run: RunState) => {
    run.disarmLimit?.();
    run.disarmLimit = null;
    run.abort.abort(RUN_ENDED);
    if (runs.get(run.sessionId) === run) runs.delete(run.sessionId);
  };
  /** The run a step of `sessionId`'s charts belongs to; none is a bug of ours, not an I/O fault. */
  const runOf = (sessionId: string): RunState => {
    const run = runs.get(sessionId);
    if (run === undefined) throw new Error(`taskRunner: no run of ${sessionId} begun`);
    return run;
  };
  /** A new incarnation's run (a crashed one's is abandoned), closed however the runner ends. */
  const begin = (sessionId: string, runner: AnyActorRef): RunState => {
    const before = runs.get(sessionId);
    if (before !== undefined) close(before);
    const run = newRun(sessionId);
    runs.set(sessionId, run);
    runner.subscribe({ complete: () => close(run), error: () => close(run) });
    return run;
  };
  const answer = answerWith(deps.track);
  const containerRun = runnerContainerRun({ deps, runs, runOf, submit, answer });

  const finalize = async (
    sessionId: string,
    outcome: RunnerOutcome,
  ): Promise<'finished' | 'gone'> => {
    const run = runs.get(sessionId);
    const s = run?.row;
    if (run === undefined || s === undefined) return 'gone';
    const handle = run.handle ?? s.handle;
    await settleFollow(run, deps.clock);
    if (outcome.outcome === 'exited' && !run.followed && outcome.output.length > run.streamed)
      deps.onOutput(sessionId, outcome.output.slice(run.streamed));
    const op = finishFor(s, outcome, run.output, deps.onStartFailure);
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

  /**
   * Past its time limit (src/actors/runTimeLimit.ts): the run is failed as
   * `timed_out` with the output read so far, then stopped as a cancel stops
   * it. A run that ended meanwhile wins the compare-and-set: nothing more.
   */
  const expire = async (run: RunState, runner: AnyActorRef): Promise<void> => {
    const s = run.row;
    if (s === undefined || run.abort.signal.aborted) return;
    const handle = run.handle ?? s.handle;
    const output =
      handle === null
        ? null
        : await backend.readOutput(ref(s.id, handle)).catch((error: unknown) => {
            deps.onError(error);
            return null;
          });
    const result = await submit(timedOutFinish(run.row ?? s, output));
    if (result.kind !== 'applied') return;
    deps.onRows(result.session, result.task);
    deps.onTimedOut?.();
    // Stopped as a cancel stops it: the container goes, the slot is released.
    tell<TaskRunnerEvent>(runner, { type: 'roundtable.runner.cancel' });
  };

  /** Sets the run's time-limit timer of `limitMs` from its grant, unless one is set or it ended. */
  const armLimit = (run: RunState, runner: AnyActorRef, limitMs: number): void => {
    const s = run.row;
    if (s === undefined || run.abort.signal.aborted || run.disarmLimit !== null) return;
    const timer = deps.clock.setTimeout(
      () => {
        run.disarmLimit = null;
        void deps.track(expire(run, runner)).catch(deps.onError);
      },
      msLeft(s.claimedAt, limitMs, deps.clock.now()),
    );
    run.disarmLimit = () => deps.clock.clearTimeout(timer);
  };
  /**
   * Once the run holds its row: its limit as the grant or the fence said
   * (no limit, the common case, costs nothing), or, for an incarnation that
   * nobody told (a runner restarted after a crash), as the store says.
   */
  const armSoon = (run: RunState, runner: AnyActorRef): void => {
    const known = run.limitMs;
    if (known === null) return;
    if (known !== undefined) {
      armLimit(run, runner, known);
      return;
    }
    const s = run.row;
    if (s === undefined) return;
    void deps
      .track(retry(() => timeLimitsOf(db, [s.id]), run.abort.signal))
      .then((limits) => {
        run.limitMs = limits.get(s.id) ?? null;
        if (run.limitMs !== null) armLimit(run, runner, run.limitMs);
      })
      .catch((error: unknown) => {
        // A run whose runner ended meanwhile needs no limit.
        if (!run.abort.signal.aborted) deps.onError(error);
      });
  };

  const loadRow = async (
    run: RunState,
    start: 'granted' | 'adopt',
    runner: AnyActorRef,
  ): Promise<RunnerRow> => {
    const grant = deps.grantOf(run.sessionId);
    // A resync hands back every row this boot runs (src/actors/dispatcher.ts);
    // one with a handle began its run under a runner here that is gone
    // since (its supervisor gave up on it): go on with that run, fenced
    // anew, never start the command a second time.
    if (grant !== undefined && grant.session.handle !== null) {
      if (grant.limitMs !== undefined) run.limitMs = grant.limitMs;
      return { kind: 'adopt' };
    }
    if (grant !== undefined) {
      run.row = grant.session;
      run.limitMs = grant.limitMs ?? null;
      run.spec = grant.task;
      armSoon(run, runner);
      return { kind: 'run' };
    }
    const fenced = deps.fencedOf?.(run.sessionId);
    if (fenced !== undefined) {
      run.prefenced = fenced.session;
      run.limitMs = fenced.limitMs;
      return { kind: 'adopt' };
    }
    const s = await retry(() => getSession(db, run.sessionId), run.abort.signal);
    if (s.status !== 'running') return { kind: 'gone' };
    // Adopt only what is ours to adopt: an orphan the Reconciler judged
    // dead, or our own run after this runner crashed. Any other running
    // row belongs to a live owner: leave it alone.
    return start === 'adopt' || s.owner === deps.owner ? { kind: 'adopt' } : { kind: 'gone' };
  };

  /** A row this boot fenced: the runner holds its slot and shows it. */
  const took = (run: RunState, fenced: Session, holder: Watchable & AnyActorRef): AdoptResult => {
    // Cancelled while the CAS was out: the cancel's own CAS decides the row;
    // this runner is gone and must not hold anything.
    if (run.abort.signal.aborted) return { kind: 'gone' };
    run.row = fenced;
    if (fenced.handle !== null) run.handle = fenced.handle;
    slots.hold(fenced.id, fenced.epoch, holder);
    armSoon(run, holder);
    deps.onRows(fenced);
    return { kind: 'adopted', handle: fenced.handle, startedAt: fenced.startedAt };
  };

  const adoptRun = async (
    sessionId: string,
    holder: Watchable & AnyActorRef,
  ): Promise<AdoptResult> => {
    const run = runOf(sessionId);
    const { signal } = run.abort;
    const pre = run.prefenced;
    run.prefenced = undefined;
    // Fenced by the Reconciler's batch (only the dead, by epoch): ours at that epoch.
    if (pre !== undefined) return took(run, pre, holder);
    const s = await retry(() => getSession(db, sessionId), signal);
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
      return took(run, fenced, holder);
    } catch (error) {
      if (error instanceof StaleStatusError) return { kind: 'gone' };
      throw error;
    }
  };

  const stopRun = async (sessionId: string, handle: string | null): Promise<void> => {
    const run = runs.get(sessionId);
    // Whatever the runner was doing is abandoned; then the run itself goes.
    if (run !== undefined) close(run);
    const h = run?.handle ?? handle;
    if (h !== null) await backend.remove(ref(sessionId, h)).catch(deps.onError);
  };

  return taskRunnerMachine.provide({
    actors: { containerRun },
    actions: {
      loadRow: ({ self }, p) => {
        const run = begin(p.sessionId, self);
        answer<RunnerRow, TaskRunnerEvent>(
          self,
          () => loadRow(run, p.start, self),
          (output) => ({ type: 'roundtable.runner.loadRow.done', output }),
          (error) => ({ type: 'roundtable.runner.loadRow.error', error }),
        );
      },
      adopt: ({ self }, p) =>
        answer<AdoptResult, TaskRunnerEvent>(
          self,
          () => adoptRun(p.sessionId, self),
          (output) => ({ type: 'roundtable.runner.adopt.done', output }),
          (error) => ({ type: 'roundtable.runner.adopt.error', error }),
        ),
      finalize: ({ self }, p) =>
        answer<'finished' | 'gone', TaskRunnerEvent>(
          self,
          () => finalize(p.sessionId, p.outcome),
          (output) => ({ type: 'roundtable.runner.finalize.done', output }),
          (error) => ({ type: 'roundtable.runner.finalize.error', error }),
        ),
      stopRun: ({ self }, p) =>
        answer<void, TaskRunnerEvent>(
          self,
          () => stopRun(p.sessionId, p.handle),
          () => ({ type: 'roundtable.runner.stopRun.done' }),
          (error) => ({ type: 'roundtable.runner.stopRun.error', error }),
        ),
      hold: ({ self }, params) => {
        const s = runs.get(params.sessionId)?.row;
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
