/**
 * What the runtime does with its tree's supervisor events: hands every one
 * to the inspector's listeners, counts restarts for /metrics, forgets
 * runners that finished (a transient child that exits normally stays
 * listed otherwise), follows the runners' supervisor across its restarts,
 * and re-attaches the live runners to a restarted RunnerPool (a new
 * incarnation watches no holder, so every live runner holds its slot
 * again; the rows and the counts never moved).
 */
import type { SupervisorEvent } from '../supervisor/events.js';
import { isCleanExit } from '../supervisor/exitReason.js';
import { Listeners } from '../supervisor/Listeners.js';
import type { Supervisor } from '../supervisor/Supervisor.js';
import { RuntimeListenerError } from './runtimeListenerError.js';
import type { RunnerStarter } from './runtimeRunners.js';

export interface TreeWatchOptions {
  root: Supervisor;
  /** The root's child ids of the runners' dynamic supervisor and of the RunnerPool. */
  runnersId: string;
  poolId: string;
  /** The live runners, to tell after a pool restart. */
  runners: Pick<RunnerStarter, 'live' | 'tell'>;
  onRestart(): void;
  isDead(): boolean;
  /**
   * Where a listener's throw goes: the listeners after it still hear, and
   * the watch's own work on the event (a finished runner forgotten, a
   * restart counted) still happens.
   */
  onError(error: unknown): void;
}

export class TreeWatch {
  private readonly listeners: Listeners<SupervisorEvent>;

  constructor(private readonly o: TreeWatchOptions) {
    this.listeners = new Listeners((error) =>
      o.onError(new RuntimeListenerError('supervisor_event', error)),
    );
    this.watchRunners(o.root.childSupervisor(o.runnersId));
    o.root.subscribe((event) => {
      this.seen(event);
      if (event.type !== 'roundtable.child.started') return;
      if (event.childId === o.runnersId) this.watchRunners(o.root.childSupervisor(o.runnersId));
      if (event.childId === o.poolId && event.restartCount > 0 && !o.isDead()) {
        for (const id of o.runners.live())
          o.runners.tell(id, { type: 'roundtable.runner.pool_restarted' });
      }
    });
  }

  /** Every supervisor event of the tree from now on (the inspector's feed). */
  subscribe(listener: (event: SupervisorEvent) => void): () => void {
    return this.listeners.add(listener);
  }

  private seen(event: SupervisorEvent): void {
    this.listeners.emit(event);
    if (event.type === 'roundtable.child.restarting') this.o.onRestart();
  }

  private watchRunners(sup: Supervisor | undefined): void {
    sup?.subscribe((event) => {
      this.seen(event);
      if (event.type === 'roundtable.child.exited' && isCleanExit(event.reason) && !this.o.isDead())
        void sup.terminateChild(event.childId).catch(() => undefined);
    });
  }
}
