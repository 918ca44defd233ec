/**
 * What a supervisor does after a child exits (OTP's `do_restart`): decide by
 * the restart type, count the restart toward the intensity, apply the
 * child's backoff, stop the rest of the strategy's group in reverse order,
 * then start the group again in order, now or after the backoff delay.
 */
import { nextBackoff } from './backoff.js';
import type { ChildRecord, ChildTable } from './ChildTable.js';
import type { SupervisorEvent } from './events.js';
import type { ExitReason } from './exitReason.js';
import type { Job } from './Mailbox.js';
import { addRestart, intensityExceeded } from './restartIntensity.js';
import { autoShutdownNow, childrenToRestart, shouldRestart } from './restartPolicy.js';
import type { ResolvedSupervisorSpec, SupervisorRuntime } from './supervisorSpec.js';

/** The parts of the supervisor that restart handling acts on. */
export interface RestartHost {
  readonly id: string;
  readonly spec: ResolvedSupervisorSpec;
  readonly runtime: SupervisorRuntime;
  readonly children: ChildTable;
  isRunning(): boolean;
  emit(event: SupervisorEvent): void;
  /** Starts one incarnation; returns the failure reason, if any. */
  spawn(child: ChildRecord): ExitReason | undefined;
  terminate(child: ChildRecord): void | Promise<void>;
  stopAll(reason: ExitReason): Promise<void>;
  post(job: Job): void;
}

export class RestartHandler {
  /** Restart instants inside the intensity window. */
  private restarts: number[] = [];

  constructor(private readonly host: RestartHost) {}

  /** Runs in the mailbox once the exit of `child` is recorded. */
  afterExit(child: ChildRecord, reason: ExitReason, startedAt: number): void | Promise<void> {
    const h = this.host;
    if (!h.isRunning()) return;
    const id = child.spec.id;
    if (!shouldRestart(child.spec.restart, reason)) return this.noRestart(child);
    const now = h.runtime.clock.now();
    this.restarts = addRestart(this.restarts, now, h.spec.periodMs);
    if (intensityExceeded(this.restarts, h.spec.intensity)) {
      h.emit({
        type: 'roundtable.supervisor.intensity_reached',
        supervisorId: h.id,
        intensity: h.spec.intensity,
        periodMs: h.spec.periodMs,
      });
      return h.stopAll('shutdown');
    }
    let delayMs = 0;
    if (child.spec.backoff) {
      const d = nextBackoff(
        child.backoffAttempts,
        now - startedAt,
        child.spec.backoff,
        h.runtime.random,
      );
      if (d.kind === 'give_up') {
        h.emit({ type: 'roundtable.child.backoff_exhausted', supervisorId: h.id, childId: id });
        return;
      }
      child.backoffAttempts = d.attempt;
      delayMs = d.delayMs;
    }
    // one_for_one needs no order: keep a crash O(1) under a big dynamic supervisor.
    const group =
      h.spec.strategy === 'one_for_one'
        ? [id]
        : childrenToRestart(h.spec.strategy, h.children.ids(), id);
    // The group's ids were read from the child table just now: each has its record.
    const siblings = group.filter((g) => g !== id).map((g) => h.children.get(g)!);
    child.status = 'restarting';
    h.emit({ type: 'roundtable.child.restarting', supervisorId: h.id, childId: id, delayMs });
    if (siblings.length === 0) return this.schedule([id], delayMs);
    return (async () => {
      for (const s of [...siblings].reverse()) await h.terminate(s);
      const ids: string[] = [];
      for (const g of group) {
        // Still in the table: this restart is the mailbox's one running job,
        // so nothing else removed a child while the siblings stopped.
        const c = h.children.get(g)!;
        // OTP: a temporary sibling taken down by a group restart is not restarted.
        if (g !== id && c.spec.restart === 'temporary') h.children.remove(g);
        else {
          c.status = 'restarting';
          ids.push(g);
        }
      }
      return this.schedule(ids, delayMs);
    })();
  }

  private noRestart(child: ChildRecord): void | Promise<void> {
    const h = this.host;
    // OTP drops a temporary child's spec; a transient one stays, stopped.
    if (child.spec.restart === 'temporary') h.children.remove(child.spec.id);
    if (!child.spec.significant) return;
    let alive = 0;
    for (const c of h.children.values())
      if (c.spec.significant && c.status !== 'stopped') alive += 1;
    if (autoShutdownNow(h.spec.autoShutdown, alive)) return h.stopAll('shutdown');
  }

  private schedule(ids: string[], delayMs: number): void | Promise<void> {
    if (delayMs <= 0) return this.startGroup(ids);
    const h = this.host;
    const timer: { id: unknown } = { id: undefined };
    timer.id = h.runtime.clock.setTimeout(() => {
      for (const g of ids) {
        const c = h.children.get(g);
        if (c?.timer === timer) c.timer = undefined;
      }
      h.post(() => this.startGroup(ids));
    }, delayMs);
    // The ids are the group's, just kept in the table above (or the crashed child itself).
    for (const g of ids) h.children.get(g)!.timer = timer;
  }

  private startGroup(ids: string[]): void | Promise<void> {
    const h = this.host;
    if (!h.isRunning()) return;
    for (const g of ids) {
      const c = h.children.get(g);
      if (c?.status !== 'restarting' || c.timer) continue;
      const failure = h.spawn(c);
      if (failure) {
        // A failed restart is one more exit: it counts toward the intensity.
        h.emit({
          type: 'roundtable.child.exited',
          supervisorId: h.id,
          childId: g,
          reason: failure,
        });
        return this.afterExit(c, failure, h.runtime.clock.now());
      }
    }
  }
}
