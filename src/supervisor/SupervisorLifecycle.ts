/**
 * A supervisor's own life: `new` until its initial children start,
 * `running` while it takes calls, `stopping` while its children go down,
 * then `exited` with one reason, once. It ends gracefully (every child by
 * its shutdown spec, last started first) or brutally (every child killed
 * now: a kill, or a job that failed). Either way the exit releases the
 * children's registered names, emits `roundtable.supervisor.shutdown`,
 * stops the inspection shell and tells the `onExit` listeners.
 */
import type { AnyActorRef } from 'xstate';
import type { ChildRecord, ChildTable } from './ChildTable.js';
import { releaseNames } from './childNames.js';
import { NoProcError } from './errors.js';
import type { ExitReason } from './exitReason.js';
import type { SupervisorOutbox } from './SupervisorOutbox.js';
import { killAllChildren, stopAllChildren } from './stopAllChildren.js';
import { stopChild } from './stopChild.js';
import type { SupervisorRuntime } from './supervisorSpec.js';

/** The parts of the supervisor its life acts on. */
export interface LifecycleHost {
  readonly id: string;
  readonly runtime: SupervisorRuntime;
  readonly children: ChildTable;
  readonly out: SupervisorOutbox;
  readonly shell: AnyActorRef | undefined;
}

export class SupervisorLifecycle {
  private state: 'new' | 'running' | 'stopping' | 'exited' = 'new';
  private why: ExitReason | undefined;

  constructor(private readonly host: LifecycleHost) {}

  /** The initial children are about to start: calls are taken from now on. */
  started(): void {
    this.state = 'running';
  }

  get running(): boolean {
    return this.state === 'running';
  }

  get exited(): boolean {
    return this.state === 'exited';
  }

  /** The exit reason, once exited. */
  get reason(): ExitReason | undefined {
    return this.why;
  }

  /** A call is refused once the supervisor is no longer running. */
  readonly admit = (): Error | undefined =>
    this.state === 'running' ? undefined : new NoProcError(this.host.id);

  /** Tells the listeners that child `childId` stopped, if anyone listens. */
  readonly reportStopped = (childId: string, reason: ExitReason): void => {
    const { out, id } = this.host;
    if (out.observed)
      out.emit({ type: 'roundtable.child.exited', supervisorId: id, childId, reason });
  };

  /** Stops one child by its shutdown spec; a promise only when there is something to wait for. */
  terminate(c: ChildRecord): void | Promise<void> {
    return stopChild(c, this.host.runtime.clock, this.reportStopped);
  }

  /**
   * Stops every child gracefully, then exits with `reason`. The exit runs
   * inside stopAllChildren's pass, not after awaiting it: with no child to
   * wait for, the whole tree is down before any DOWN is delivered
   * (stopAllChildren says why the runtime needs that).
   */
  stopAll(reason: ExitReason): Promise<void> {
    if (this.state === 'exited' || this.state === 'stopping') return Promise.resolve();
    this.state = 'stopping';
    const { children, runtime } = this.host;
    return stopAllChildren(children, runtime.clock, this.reportStopped, () => this.exit(reason));
  }

  /** Kills every child at once and exits with `reason`, all before this returns. */
  killAll(reason: ExitReason): void {
    if (this.state === 'exited') return;
    this.state = 'stopping';
    killAllChildren(this.host.children, this.host.runtime.clock, this.reportStopped);
    this.exit(reason);
  }

  private exit(reason: ExitReason): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.why = reason;
    const { id, runtime, children, out, shell } = this.host;
    releaseNames(runtime.registry, children.values());
    out.emit({ type: 'roundtable.supervisor.shutdown', supervisorId: id, reason });
    shell?.stop();
    out.exited(reason);
  }
}
