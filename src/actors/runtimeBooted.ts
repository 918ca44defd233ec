/**
 * `runtime.booted`: settled once, by whichever comes first, the first boot
 * pass that ran (or the leader's word, for a follower) or the tree's end.
 * A pass resolves it only after the board's first load (`ready`), so a
 * caller that awaits it sees every card; the tree ending meanwhile no
 * longer rejects it.
 */
import type { PassReport } from './reconcilerSteps.js';
import { type RuntimeExit, RuntimeStoppedError } from './runtimeExit.js';

export class BootSignal {
  readonly promise: Promise<PassReport>;
  private settle: { resolve(r: PassReport): void; reject(e: Error): void } | undefined;

  constructor(private readonly ready: Promise<unknown>) {
    this.promise = new Promise<PassReport>((resolve, reject) => {
      this.settle = { resolve, reject };
    });
    // Nobody may be waiting when the tree ends first.
    this.promise.catch(() => undefined);
  }

  /** A boot pass ran: the first one resolves `promise` with its report, once `ready` has settled. */
  passed(report: PassReport): void {
    const settle = this.settle;
    this.settle = undefined;
    if (settle !== undefined) void this.ready.then(() => settle.resolve(report));
  }

  /** The tree ended: rejects `promise` with a `RuntimeStoppedError` unless a pass came first. */
  ended(exit: RuntimeExit): void {
    this.settle?.reject(new RuntimeStoppedError(exit));
    this.settle = undefined;
  }
}
