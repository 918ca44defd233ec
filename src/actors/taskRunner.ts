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
import type { ContainerBackend, RunOutput, RunRef } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';
import {
  adopt,
  type Db,
  getSession,
  type Session,
  StaleStatusError,
  type Task,
} from '../db/index.js';
import type { TickFinish, TickHandle, TickOutcome } from '../db/tickTypes.js';
import { containerRunMachine } from '../machines/containerRun.js';
import type {
  ContainerRunError,
  ContainerRunEvent,
  Observation,
  StartedRun,
} from '../machines/containerRunTypes.js';
import {
  type AdoptResult,
  type RunnerOutcome,
  type RunnerRow,
  type TaskRunnerEvent,
  taskRunnerMachine,
} from '../machines/taskRunner.js';
import type { Watchable } from '../supervisor/watchExit.js';
import type { DispatchClock } from './dispatcher.js';
import { DispatchUnavailableError } from './dispatcher.js';
import { retryTransient } from './retryTransient.js';
import { finishFor, type StartFailure } from './runnerFinish.js';

export type { StartFailure } from './runnerFinish.js';

/** The node's slots as a runner sees them: writes through the next tick, and the held slot. */
export interface RunnerSlots {
  submit(op: Omit<TickHandle, 'ref'> | Omit<TickFinish, 'ref'>): Promise<TickOutcome>;
  /** This runner holds `sessionId` at `epoch` (monitored: its DOWN releases the slot). */
  hold(sessionId: string, epoch: number, holder: Watchable): void;
  /** Done with it. Idempotent. */
  release(sessionId: string): void;
}

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

/** Throws when the run was abandoned meanwhile: a stopped or cancelled runner writes nothing more. */
function alive(signal: AbortSignal): void {
  if (signal.aborted) throw new Error('taskRunner stopped');
}

/** One run of this boot: what its runner's steps learned, from its first step to its end. */
interface RunState {
  sessionId: string;
  /**
   * Aborted when the runner ends in any way (done, stopped, crashed) or is
   * cancelled: its I/O in flight is abandoned (retries stop, the exec
   * stream is closed, an adopt CAS that lands late holds nothing).
   */
  abort: AbortController;
  /**
   * The row as this boot's grant, adopt or write returned it. Only a write
   * of ours moves a row we own on (every later write is fenced by its
   * epoch), so reading it back would only tell us what we know.
   */
  row: Session | undefined;
  /** The granted task: the run spec. */
  spec: Task | undefined;
  /** A row the Reconciler fenced for this boot, from `loadRow` to the adopt step. */
  prefenced: Session | undefined;
  /** Where the run lives, once started (the handle op may still be on its way). */
  handle: string | null;
  /**
   * Characters of the output this boot already streamed to the board. An
   * adopted run streamed none here: finalize hands the board the rest of
   * the complete output it read.
   */
  streamed: number;
  /** The same in bytes of the output file: where a follow after a broken attach goes on. */
  streamedBytes: number;
  /** Stops the follow of an adopted run's output (reading to the end first), while one runs. */
  unfollow: (() => void) | null;
  /**
   * A follow passed the output on to the board up to its stop (on the
   * marker: all of it), so finalize hands it none again.
   */
  followed: boolean;
  /** The output finalize stores on the row (as the backend read it, uncut by us). */
  output: RunOutput | undefined;
}

/**
 * Why a run's I/O was abandoned. One shared reason: `abort()` with none
 * builds a DOMException with a stack trace, once per job.
 */
const RUN_ENDED = new Error('taskRunner: the run ended');

/** Something that takes a chart's events (the `self` of a provided action). */
interface EventTarget<E> {
  send(event: E): void;
  getSnapshot(): { status: string };
}

/** Tells `to`, unless it stopped meanwhile (its late answers are nobody's). */
function tell<E>(to: EventTarget<E>, event: E): void {
  if (to.getSnapshot().status === 'active') to.send(event);
}

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

  /** Each session's run, begun by its runner's first step. */
  const runs = new Map<string, RunState>();
  const close = (run: RunState) => {
    run.abort.abort(RUN_ENDED);
    if (runs.get(run.sessionId) === run) runs.delete(run.sessionId);
  };
  /** A new incarnation's run (a crashed one's is abandoned), closed however the runner ends. */
  const begin = (sessionId: string, runner: AnyActorRef): RunState => {
    const before = runs.get(sessionId);
    if (before !== undefined) close(before);
    const run: RunState = {
      sessionId,
      abort: new AbortController(),
      row: undefined,
      spec: undefined,
      prefenced: undefined,
      handle: null,
      streamed: 0,
      streamedBytes: 0,
      unfollow: null,
      followed: false,
      output: undefined,
    };
    runs.set(sessionId, run);
    runner.subscribe({ complete: () => close(run), error: () => close(run) });
    return run;
  };
  /** The run a step of `sessionId`'s charts belongs to; none is a bug of ours, not an I/O fault. */
  const runOf = (sessionId: string): RunState => {
    const run = runs.get(sessionId);
    if (run === undefined) throw new Error(`taskRunner: no run of ${sessionId} begun`);
    return run;
  };
  /** Runs one I/O call (counted in flight) and tells `to` how it went. */
  const answer = <T, E>(
    to: EventTarget<E>,
    work: () => Promise<T>,
    done: (output: T) => E,
    failed: (error: unknown) => E,
  ): void => {
    void deps.track(Promise.resolve().then(work)).then(
      (output) => tell(to, done(output)),
      (error: unknown) => tell(to, failed(error)),
    );
  };

  const startRun = async (sessionId: string): Promise<StartedRun> => {
    const run = runOf(sessionId);
    const s = run.row;
    const task = run.spec;
    if (s === undefined || task === undefined)
      throw new StaleStatusError(
        sessionId,
        { status: 'running', epoch: -1 },
        { status: 'unknown', epoch: -1 },
      );
    alive(run.abort.signal);
    const started = await backend.start({
      sessionId: s.id,
      image: task.spec.image,
      command: task.spec.command,
      ...(task.spec.env ? { env: task.spec.env } : {}),
      labels: { 'roundtable.user': s.userId, 'roundtable.task': s.taskId },
    });
    run.handle = started.handle;
    // Rides the next tick; not awaited, so the run's output is not held up
    // by a commit. A finish sent later is applied after it (a tick applies
    // handles before finishes), and a crash before it commits leaves a
    // running row with no handle: an orphan the Reconciler fails and re-queues.
    void submit({
      op: 'handle',
      sessionId: s.id,
      epoch: s.epoch,
      backend: backend.kind,
      handle: started.handle,
      startedAt: started.startedAt ?? null,
    }).then((outcome) => {
      if (outcome.kind === 'applied') run.row = outcome.session;
    }, deps.onError);
    return { handle: started.handle, startedAt: started.startedAt ?? null };
  };

  /** A chunk of a run's output on its way to the board. */
  const shown = (run: RunState, chunk: string) => {
    run.streamed += chunk.length;
    run.streamedBytes += Buffer.byteLength(chunk);
    deps.onOutput(run.sessionId, chunk);
  };

  /**
   * An adopted run's output as it is written: from where this boot's
   * stream of it broke off, or (adopted from another boot) from the last
   * lines written so far. Stopped by `unfollow` or when the run ends.
   */
  const follow = (to: EventTarget<ContainerRunEvent>, input: RunRef): void => {
    const run = runs.get(input.sessionId);
    const follow = backend.follow?.bind(backend);
    if (run === undefined || follow === undefined || run.abort.signal.aborted) return;
    const stop = new AbortController();
    let open = true;
    let stopping = false;
    const ended = () => {
      open = false;
      stop.abort();
    };
    run.abort.signal.addEventListener('abort', ended, { once: true });
    follow(input, {
      signal: stop.signal,
      ...(run.streamedBytes > 0 ? { fromByte: run.streamedBytes } : {}),
      onOutput: (chunk) => {
        if (!open) return;
        shown(run, chunk);
        if (!stopping) tell(to, { type: 'roundtable.run.output', chunk });
      },
    });
    run.unfollow = () => {
      run.unfollow = null;
      run.abort.signal.removeEventListener('abort', ended);
      // The stop reads to the end of the file first (on the marker: the whole output).
      stopping = true;
      stop.abort();
      open = false;
      run.followed = true;
    };
  };

  const attach = (to: EventTarget<ContainerRunEvent>, input: RunRef): void => {
    const run = runs.get(input.sessionId);
    const signal = run?.abort.signal;
    if (run === undefined || signal === undefined || signal.aborted) return;
    const send = (e: ContainerRunEvent) => {
      if (!signal.aborted) tell(to, e);
    };
    // Not tracked: attach waits on the run's own time, it is not I/O in flight.
    Promise.resolve()
      .then(() =>
        backend.attach(input, {
          signal,
          onOutput: (chunk) => {
            if (signal.aborted) return;
            shown(run, chunk);
            send({ type: 'roundtable.run.output', chunk });
          },
        }),
      )
      .then(
        (exit) => send({ type: 'roundtable.run.exited', exitCode: exit.exitCode }),
        (error: unknown) => send({ type: 'roundtable.run.attach.error', error }),
      );
  };

  const containerRun = containerRunMachine.provide({
    actions: {
      startRun: ({ self }, p) =>
        answer<StartedRun, ContainerRunEvent>(
          self,
          () => startRun(p.sessionId),
          (output) => ({ type: 'roundtable.run.startRun.done', output }),
          (error) => ({ type: 'roundtable.run.startRun.error', error }),
        ),
      attach: ({ self }, p) => attach(self, p),
      follow: ({ self }, p) => follow(self, p),
      unfollow: (_, p) => runs.get(p.sessionId)?.unfollow?.(),
      observe: ({ self }, p) =>
        answer<Observation, ContainerRunEvent>(
          self,
          () =>
            backend.observe(ref(p.sessionId, p.handle)).then((o) => ({
              containerStartedAt: o.containerStartedAt,
              marker: o.marker,
            })),
          (output) => ({ type: 'roundtable.run.observe.done', seq: p.seq, output }),
          (error) => ({ type: 'roundtable.run.observe.error', seq: p.seq, error }),
        ),
      readOutput: ({ self }, p) =>
        answer<string, ContainerRunEvent>(
          self,
          () =>
            backend.readOutput(ref(p.sessionId, p.handle)).then((o) => {
              const run = runs.get(p.sessionId);
              if (run !== undefined) run.output = o;
              // Cut output is marked, never silent (DESIGN.md).
              return o.truncated
                ? `[roundtable: output cut to its last ${o.text.length} characters]\n${o.text}`
                : o.text;
            }),
          (output) => ({ type: 'roundtable.run.readOutput.done', output }),
          (error) => ({ type: 'roundtable.run.readOutput.error', error }),
        ),
    },
  });

  const finalize = async (
    sessionId: string,
    outcome: RunnerOutcome,
  ): Promise<'finished' | 'gone'> => {
    const run = runs.get(sessionId);
    const s = run?.row;
    if (run === undefined || s === undefined) return 'gone';
    const handle = run.handle ?? s.handle;
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

  const loadRow = async (run: RunState, start: 'granted' | 'adopt'): Promise<RunnerRow> => {
    const grant = deps.grantOf(run.sessionId);
    if (grant !== undefined) {
      run.row = grant.session;
      run.spec = grant.task;
      return { kind: 'run' };
    }
    const fenced = deps.fencedOf?.(run.sessionId);
    if (fenced !== undefined) {
      run.prefenced = fenced;
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
  const took = (run: RunState, fenced: Session, holder: Watchable): AdoptResult => {
    // Cancelled while the CAS was out: the cancel's own CAS decides the row;
    // this runner is gone and must not hold anything.
    if (run.abort.signal.aborted) return { kind: 'gone' };
    run.row = fenced;
    if (fenced.handle !== null) run.handle = fenced.handle;
    slots.hold(fenced.id, fenced.epoch, holder);
    deps.onRows(fenced);
    return { kind: 'adopted', handle: fenced.handle, startedAt: fenced.startedAt };
  };

  const adoptRun = async (sessionId: string, holder: Watchable): Promise<AdoptResult> => {
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
          () => loadRow(run, p.start),
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
