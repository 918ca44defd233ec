/**
 * Plays a demo plan against a running node. Each step runs on its own timer
 * and only logs when it cannot act (nothing running to reschedule yet, no
 * failed card to retry): a demo must never take the node down.
 */
import type { Logger } from 'pino';
import type { Runtime } from '../actors/runtimeTypes.js';
import type { SimulatedCluster } from '../containers/simulated/SimulatedCluster.js';
import type { DemoStep } from './demoPlan.js';

export interface DemoTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: DemoTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

/** A step that found nothing to act on tries again this much later, this many times. */
const RETRY_MS = 1_000;
const RETRIES = 10;

/** Starts the plan; the returned function cancels the steps not yet run. */
export function runDemoWorkload(
  runtime: Runtime,
  cluster: SimulatedCluster | null,
  plan: readonly DemoStep[],
  logger: Pick<Logger, 'info' | 'warn'>,
  timers: DemoTimers = realTimers,
): () => void {
  const pending = new Set<unknown>();
  let stopped = false;
  const schedule = (fn: () => void, ms: number) => {
    const handle = timers.setTimeout(() => {
      pending.delete(handle);
      if (!stopped) fn();
    }, ms);
    pending.add(handle);
  };
  const act = (step: DemoStep, triesLeft: number) => {
    perform(runtime, cluster, step).then(
      (done) => {
        // Submissions show up as card lines already.
        if (done) {
          if (step.kind !== 'submit') logger.info({ step: step.kind }, describe(step));
        } else if (triesLeft > 0) schedule(() => act(step, triesLeft - 1), RETRY_MS);
        else logger.warn({ step: step.kind }, `demo: nothing to ${step.kind}, skipped`);
      },
      (error: unknown) => logger.warn({ err: error, step: step.kind }, 'demo step failed'),
    );
  };
  for (const step of plan) schedule(() => act(step, RETRIES), step.atMs);
  return () => {
    stopped = true;
    for (const handle of pending) timers.clearTimeout(handle);
    pending.clear();
  };
}

/** Does one step; false when there was nothing to act on yet. */
async function perform(
  runtime: Runtime,
  cluster: SimulatedCluster | null,
  step: DemoStep,
): Promise<boolean> {
  const cards = () => runtime.cards(null);
  switch (step.kind) {
    case 'submit':
      await runtime.createTask(step.user, {
        title: step.title,
        image: 'roundtable/demo-agent',
        command: step.command,
      });
      return true;
    case 'setCap':
      await runtime.setUserCap(step.user, step.maxRunning);
      return true;
    case 'cancelQueued': {
      const last = cards()
        .filter((c) => c.column === 'queued')
        .sort((a, b) => (b.queued?.position ?? 0) - (a.queued?.position ?? 0))[0];
      if (last === undefined) return false;
      await runtime.cancel(null, last.taskId);
      return true;
    }
    case 'reschedule': {
      const running = cards().find((c) => c.column === 'running');
      if (running === undefined || cluster === null) return false;
      cluster.reschedule(running.sessionId);
      return true;
    }
    case 'retryFailed': {
      const failed = cards().find((c) => c.status === 'failed');
      if (failed === undefined) return false;
      await runtime.retry(null, failed.taskId);
      return true;
    }
  }
}

function describe(step: DemoStep): string {
  switch (step.kind) {
    case 'submit':
      return `demo: ${step.user} submits "${step.title}"`;
    case 'setCap':
      return `demo: ${step.user} may now run ${step.maxRunning} at once`;
    case 'cancelQueued':
      return 'demo: the last card in line is cancelled';
    case 'reschedule':
      return 'demo: Swarm moves a running container to another machine';
    case 'retryFailed':
      return 'demo: a failed task is retried';
  }
}
