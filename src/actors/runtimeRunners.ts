/**
 * The runners of one boot: starting a TaskRunner for a granted session (or,
 * for the Reconciler, on the adopt path), the hand-off of the granted rows
 * to the runner's first step, and what a holder's DOWN means. Kept apart
 * from the tree's assembly so the one place that knows how a runner is
 * started is small enough to read.
 */
import type { Session, Task } from '../db/rows.js';
import type { TaskRunnerCommand, TaskRunnerInput } from '../machines/taskRunner.js';
import { AlreadyStartedError } from '../supervisor/errors.js';
import type { Supervisor } from '../supervisor/Supervisor.js';
import type { taskRunnerLogic } from './taskRunner.js';

export interface RunnerStarterOptions {
  runners(): Supervisor | undefined;
  logic: ReturnType<typeof taskRunnerLogic>;
  input: Pick<TaskRunnerInput, 'pollMs' | 'adoptBudgetMs' | 'ioTimeoutMs'>;
  isDead(): boolean;
}

export class RunnerStarter {
  /** Rows a tick granted, taken once by the runner's first step. */
  private readonly grants = new Map<string, { session: Session; task: Task }>();
  /** Rows the Reconciler fenced for this boot, taken once by the adopting runner. */
  private readonly fenced = new Map<string, Session>();

  constructor(private readonly o: RunnerStarterOptions) {}

  /** The granted rows of `sessionId`, once. */
  take(sessionId: string): { session: Session; task: Task } | undefined {
    const g = this.grants.get(sessionId);
    this.grants.delete(sessionId);
    return g;
  }

  /** The row the Reconciler fenced for `sessionId`, once. */
  takeFenced(sessionId: string): Session | undefined {
    const s = this.fenced.get(sessionId);
    this.fenced.delete(sessionId);
    return s;
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

  /** A tick granted `grant.session` to this node: its runner starts the run. */
  granted(grant: { session: Session; task: Task }): Promise<void> {
    this.grants.set(grant.session.id, grant);
    return this.start(grant.session, 'granted').finally(() => {
      // Taken by the runner's first step by now, or it never started.
      this.grants.delete(grant.session.id);
    });
  }

  /** The Reconciler fenced `session` for this boot: its runner goes on from that row. */
  adoptFenced(session: Session): Promise<void> {
    this.fenced.set(session.id, session);
    return this.start(session, 'adopt').finally(() => {
      // Taken by the runner's first step by now, or it never started.
      this.fenced.delete(session.id);
    });
  }

  private async start(
    session: Pick<Session, 'id' | 'userId'>,
    start: TaskRunnerInput['start'],
  ): Promise<void> {
    const sup = this.o.runners();
    if (this.o.isDead() || sup === undefined) return; // the next Reconciler pass tries again
    const known = sup.childStatus(session.id);
    if (known !== undefined && known !== 'stopped') return;
    try {
      if (known !== undefined) await sup.terminateChild(session.id);
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
