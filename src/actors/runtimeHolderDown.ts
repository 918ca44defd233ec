/**
 * What a holder's DOWN means (the RunnerPool saw a runner holding a slot
 * exit, or a granted runner never started). Its supervisor restarts a
 * transient runner that crashed, and the new incarnation holds again; if
 * none does by the time the supervisor has handled the exit, the slot goes
 * back in the next tick: the run fails as `runner_lost` and its session is
 * queued again at the head of its user's line.
 */
import { newId } from '../db/index.js';
import type { TickOutcome } from '../db/tickTypes.js';
import type { CommandOp } from './runtimeCommands.js';

export interface HolderDownOptions {
  /** The epoch this node holds `sessionId` at, or undefined when it holds it not. */
  heldEpoch(sessionId: string): number | undefined;
  /** Stops counting `sessionId` as held here. */
  drop(sessionId: string): void;
  /** Whether `sessionId` has a runner that has not ended (running or restarting). */
  hasRunner(sessionId: string): boolean;
  /** Resolves once the runners' supervisor has handled every exit it was told of. */
  runnersSettled(): Promise<void>;
  submit(op: CommandOp): Promise<TickOutcome>;
  removeRun(run: { sessionId: string; handle: string }): Promise<void>;
  isDead(): boolean;
  track<T>(work: Promise<T>): Promise<T>;
  onError(error: unknown): void;
}

/** The handler the RunnerPool calls with the session of a holder that went down. */
export function holderDown(o: HolderDownOptions): (sessionId: string) => void {
  const release = async (sessionId: string, epoch: number) => {
    await o.runnersSettled();
    if (o.isDead() || o.hasRunner(sessionId) || o.heldEpoch(sessionId) !== epoch) return;
    const outcome = await o.submit({
      op: 'finish',
      sessionId,
      epoch,
      status: 'failed',
      exitCode: null,
      reason: 'runner_lost',
      userRecoverable: true,
      output: null,
      column: 'queued',
      requeue: { sessionId: newId('session') },
    });
    if (outcome.kind === 'applied' && outcome.session.handle !== null)
      await o.removeRun({ sessionId, handle: outcome.session.handle }).catch(o.onError);
  };
  return (sessionId) => {
    const epoch = o.heldEpoch(sessionId);
    if (o.isDead() || epoch === undefined) return;
    void o.track(release(sessionId, epoch)).catch((error: unknown) => {
      // The release did not land (the store stayed down past its deadline):
      // stop counting the session here, so the Reconciler's step 2 sees a
      // run of this boot with no runner and recovers it.
      o.drop(sessionId);
      o.onError(error);
    });
  };
}
