/**
 * The runners of one boot: starting a TaskRunner for a granted session (or,
 * for the Reconciler, on the adopt path), the hand-off of the granted rows
 * to the runner's first step, and what a holder's DOWN means. Kept apart
 * from the tree's assembly so the one place that knows how a runner is
 * started is small enough to read.
 */
import type { Session, Task } from '../db/rows.js';
import type { TaskRunnerCommand, TaskRunnerInput } from '../machines/taskRunner.js';
import { AlreadyStartedError, NotFoundError } from '../supervisor/errors.js';
import type { Supervisor } from '../supervisor/Supervisor.js';
import type { taskRunnerLogic } from './taskRunner.js';

/** A grant as the runner's first step takes it: the rows, and the task's time limit (null or absent: none). */
export interface Granted {
  session: Session;
  task: Task;
  limitMs?: number | null;
}

/** A row the Reconciler fenced for this boot, with its task's time limit (null: none). */
export interface Fenced {
  session: Session;
  limitMs: number | null;
}

export interface RunnerStarterOptions {
  runners(): Supervisor | undefined;
  logic: ReturnType<typeof taskRunnerLogic>;
  input: Pick<TaskRunnerInput, 'pollMs' | 'adoptBudgetMs' | 'ioTimeoutMs'>;
  isDead(): boolean;
}

export class RunnerStarter {
  /** Rows a tick granted (with the task's time limit), taken once by the runner's first step. */
  private readonly grants = new Map<string, Granted>();
  /** Rows the Reconciler fenced for this boot (with their time limits), taken once by the adopting runner. */
  private readonly fenced = new Map<string, Fenced>();
  /** The epoch each session's latest runner here was started at: the grant's or the fenced row's. */
  private readonly epochs = new Map<string, number>();

  constructor(private readonly o: RunnerStarterOptions) {}

  /** The granted rows of `sessionId`, once. */
  take(sessionId: string): Granted | undefined {
    const g = this.grants.get(sessionId);
    this.grants.delete(sessionId);
    return g;
  }

  /** The row the Reconciler fenced for `sessionId`, once. */
  takeFenced(sessionId: string): Fenced | undefined {
    const s = this.fenced.get(sessionId);
    this.fenced.delete(sessionId);
    return s;
  }

  /** Sessions whose runner is being started: granted or fenced here, not yet taken by its first step. */
  starting(): IterableIterator<string> {
    return [...this.grants.keys(), ...this.fenced.keys()].values();
  }

  /** Sessions with a runner that has not ended. */
  live(): Set<string> {
    return new Set(
      (this.o.runners()?.whichChildren() ?? [])
        .filter((c) => c.status !== 'stopped')
        .map((c) => c.id),
    );
  }

  /** Whether `sessionId` has a runner that has not ended (running or restarting). O(1): asked per grant. */
  has(sessionId: string): boolean {
    const status = this.o.runners()?.childStatus(sessionId);
    return status !== undefined && status !== 'stopped';
  }

  /** Tells `sessionId`'s runner, if one runs here now; false if none did. */
  tell(sessionId: string, event: TaskRunnerCommand): boolean {
    const ref = this.o.runners()?.child(sessionId);
    if (ref === undefined) return false;
    ref.send(event);
    return true;
  }

  /** The epoch `sessionId`'s latest runner here was started at; undefined when none was (or forgotten). */
  startEpoch(sessionId: string): number | undefined {
    return this.epochs.get(sessionId);
  }

  /** Forgets the start epochs of sessions with no runner that has not ended. */
  forgetEnded(): void {
    for (const id of this.epochs.keys()) if (!this.has(id)) this.epochs.delete(id);
  }

  /**
   * Stops `sessionId`'s runner, whose row another node moved on to
   * `rowEpoch`, if `ours()` (asked now, as the stop is posted) is still
   * behind it; its container is left alone. Returns the epoch it held the
   * run at, if it stopped one. The supervisor's mailbox runs jobs in order,
   * so a start posted after this one (the run fenced back to this boot)
   * comes after the stop.
   */
  async stopFencedOut(
    sessionId: string,
    rowEpoch: number,
    ours: () => number | undefined,
  ): Promise<number | undefined> {
    const sup = this.o.runners();
    const epoch = ours();
    if (sup === undefined || !this.has(sessionId) || this.fenced.has(sessionId)) return undefined;
    if (epoch === undefined || epoch >= rowEpoch) return undefined;
    this.epochs.delete(sessionId);
    await sup.terminateChild(sessionId).catch(ignoreNotFound);
    return epoch;
  }

  /** A tick granted `grant.session` to this node: its runner starts the run. */
  granted(grant: Granted): Promise<void> {
    this.grants.set(grant.session.id, grant);
    if (!this.has(grant.session.id)) this.epochs.set(grant.session.id, grant.session.epoch);
    return this.start(grant.session, 'granted').finally(() => {
      // Taken by the runner's first step by now, or it never started.
      this.grants.delete(grant.session.id);
    });
  }

  /**
   * The Reconciler fenced `session` for this boot: its runner goes on from
   * that row. A runner of the session already here is replaced: it began
   * before the fence, at an older epoch, so the fence moved it out (this
   * boot lost its lock, another node adopted the run, that node died, and
   * the run comes back here). Left running, it would hold the slot at the
   * old epoch and the fenced row would get no runner.
   */
  adoptFenced(session: Session, limitMs: number | null): Promise<void> {
    this.fenced.set(session.id, { session, limitMs });
    this.epochs.set(session.id, session.epoch);
    return this.start(session, 'adopt', true).finally(() => {
      // Taken by the runner's first step by now, or it never started.
      this.fenced.delete(session.id);
    });
  }

  private async start(
    session: Pick<Session, 'id' | 'userId'>,
    start: TaskRunnerInput['start'],
    replace = false,
  ): Promise<void> {
    const sup = this.o.runners();
    if (this.o.isDead() || sup === undefined) return; // the next Reconciler pass tries again
    const known = sup.childStatus(session.id);
    if (known !== undefined && known !== 'stopped' && !replace) return;
    try {
      // Stopping a runner leaves its container alone: the new one goes on with it.
      if (known !== undefined) await sup.terminateChild(session.id).catch(ignoreNotFound);
      await sup.startChild({
        id: session.id,
        restart: 'transient',
        start: {
          logic: this.o.logic,
          input: { sessionId: session.id, userId: session.userId, start, ...this.o.input },
        },
      });
    } catch (error) {
      // Two starters racing for one session: the first one won, which is fine.
      if (error instanceof AlreadyStartedError) return;
      throw error;
    }
  }
}

/** The child went on its own between the look and the terminate: nothing left to stop. */
function ignoreNotFound(error: unknown): void {
  if (!(error instanceof NotFoundError)) throw error;
}
