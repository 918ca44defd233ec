/**
 * A node's TaskRunners as the runtime wires them: the runner logic given
 * the node's slots (the dispatcher counts a hold, the RunnerPool monitors
 * its holder), its board, engine gate and metrics, and the starter that
 * spawns one runner per granted or fenced session under `taskRunners`.
 */

import type { AnyActorRef } from 'xstate';
import { TIMED_OUT } from '../board/timeLimit.js';
import type { Session } from '../db/index.js';
import type { TickHandle, TickOutcome } from '../db/tickTypes.js';
import { afterRefusedHandle } from '../machines/fencedOut.js';
import type { Supervisor } from '../supervisor/index.js';
import { RunnerFencedOutNotice } from './fencedOutSweep.js';
import type { RuntimeMetrics } from './runtimeMetrics.js';
import type { ResolvedRuntimeOptions } from './runtimeOptions.js';
import { RunnerStarter } from './runtimeRunners.js';
import type { Shell } from './runtimeShell.js';
import { taskRunnerLogic } from './taskRunner.js';

export interface NodeRunnersOptions {
  o: Pick<
    ResolvedRuntimeOptions,
    'db' | 'backend' | 'clock' | 'storeDeadlineMs' | 'pollMs' | 'adoptBudgetMs' | 'ioTimeoutMs'
  >;
  owner: string;
  isTransient(error: unknown): boolean;
  shell: Pick<Shell, 'dispatcher' | 'board' | 'engine' | 'liveTails'>;
  metrics: RuntimeMetrics;
  /** The RunnerPool now (none while its supervisor restarts it). */
  pool(): AnyActorRef | undefined;
  /** The runners' supervisor now. */
  runners(): Supervisor | undefined;
  /** Whether the liveness decision lets this boot adopt `session`'s run. */
  mayAdopt(session: Session): Promise<boolean>;
  isDead(): boolean;
  report(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/** The starter of this node's TaskRunners, with their logic wired to the node. */
export function nodeRunners(r: NodeRunnersOptions): RunnerStarter {
  const { dispatcher, board, engine, liveTails } = r.shell;
  const logic = taskRunnerLogic({
    db: r.o.db,
    backend: r.o.backend,
    slots: {
      submit: (op) => {
        const outcome = dispatcher.submit(op);
        if (op.op === 'handle')
          // A rejection is the runner's own to report (runnerContainerRun.ts); here only the answer counts.
          void outcome.then(
            (x) => refusedHandle(op, x),
            () => undefined,
          );
        return outcome;
      },
      hold(sessionId, epoch, holder) {
        dispatcher.hold(sessionId, epoch);
        r.pool()?.send({ type: 'roundtable.pool.hold', sessionId, holder });
      },
      release(sessionId) {
        dispatcher.drop(sessionId);
        r.pool()?.send({ type: 'roundtable.pool.release', sessionId });
      },
    },
    owner: r.owner,
    clock: r.o.clock,
    isTransient: (error) => r.isTransient(error),
    storeDeadlineMs: r.o.storeDeadlineMs,
    onOutput: (sessionId, chunk) => {
      board.appendOutput(sessionId, chunk);
      liveTails?.output(sessionId, chunk);
    },
    onRows: (session, task, outputShown) => {
      if (!r.isDead())
        void r
          .track(board.apply(session, task ?? undefined, { outputShown: outputShown ?? false }))
          .catch(r.report);
    },
    grantOf: (sessionId) => starter.take(sessionId),
    fencedOf: (sessionId) => starter.takeFenced(sessionId),
    mayAdopt: (s) => r.mayAdopt(s),
    onStartFailure: (error, session) => engine.startFailed(error, session),
    onRequeued: (reason) => r.metrics.gaveUp(reason),
    onTimedOut: () => r.metrics.gaveUp(TIMED_OUT),
    onError: r.report,
    track: (work) => r.track(work),
  });
  /**
   * A handle the tick refused: the row moved on while the container was
   * being started (afterRefusedHandle). Acted on at once, with what the
   * refusal says of the row: no read, and no run beside the next attempt
   * until the next sweep.
   */
  const refusedHandle = (op: Pick<TickHandle, 'sessionId' | 'epoch'>, outcome: TickOutcome) => {
    if (outcome.kind !== 'stale' || r.isDead()) return;
    const then = afterRefusedHandle(op.epoch, outcome.actual);
    if (then === 'cancel') starter.tell(op.sessionId, { type: 'roundtable.runner.cancel' });
    else if (then === 'fenced')
      void r
        .track(starter.stopFencedOut(op.sessionId, outcome.actual.epoch, () => op.epoch))
        .then((was) => {
          if (was === undefined) return;
          dispatcher.drop(op.sessionId);
          r.report(new RunnerFencedOutNotice(op.sessionId, was, outcome.actual.epoch));
        })
        .catch(r.report);
  };
  const starter = new RunnerStarter({
    runners: r.runners,
    logic,
    input: { pollMs: r.o.pollMs, adoptBudgetMs: r.o.adoptBudgetMs, ioTimeoutMs: r.o.ioTimeoutMs },
    isDead: r.isDead,
  });
  return starter;
}
