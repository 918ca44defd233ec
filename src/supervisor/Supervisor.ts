/**
 * The supervisor: a runtime shell that starts XState actors from child specs,
 * turns every way they can end into an exit reason, and restarts them by
 * OTP's rules. It handles one job at a time (exits, startChild, shutdown),
 * like a gen_server's mailbox, so an exit that arrives while siblings are
 * being stopped waits its turn instead of interleaving.
 */
import { type AnyActorRef, createActor, fromTransition } from 'xstate';
import { nextBackoff } from './backoff.js';
import { type ChildSpec, type ResolvedChildSpec, validateChildSpec } from './childSpec.js';
import {
  AlreadyStartedError,
  ChildSpecError,
  ChildStartError,
  MaxChildrenError,
  NoProcError,
  NotFoundError,
} from './errors.js';
import type { SupervisorEvent } from './events.js';
import type { ExitReason } from './exitReason.js';
import { addRestart, intensityExceeded } from './restartIntensity.js';
import { autoShutdownNow, childrenToRestart, shouldRestart } from './restartPolicy.js';
import { type NestedSupervisor, type Spawned, spawnChild } from './spawnChild.js';
import {
  type ResolvedSupervisorSpec,
  resolveRuntime,
  resolveSupervisorSpec,
  type SupervisorRuntime,
  type SupervisorSpec,
} from './supervisorSpec.js';
import { type TreeSnapshot, treeReducer } from './treeReducer.js';
import type { ExitSource } from './watchExit.js';

interface ChildRecord {
  spec: ResolvedChildSpec;
  input: unknown;
  spawned: Spawned | undefined;
  status: 'running' | 'restarting' | 'stopped';
  starts: number;
  backoffAttempts: number;
  timer: { id: unknown } | undefined;
}

/** One row of `whichChildren()`. */
export interface ChildInfo {
  id: string;
  ref: AnyActorRef | Supervisor | undefined;
  type: 'worker' | 'supervisor';
  restart: ResolvedChildSpec['restart'];
  status: 'running' | 'restarting' | 'stopped';
  restartCount: number;
}

/** `countChildren()`, as OTP's count_children. */
export interface ChildCounts {
  specs: number;
  active: number;
  supervisors: number;
  workers: number;
}

/** Extra start arguments for a dynamic supervisor's template. */
export interface StartArgs {
  id?: string;
  input?: unknown;
}

type Job = () => void | Promise<void>;

export class Supervisor implements ExitSource, NestedSupervisor {
  readonly id: string;
  readonly sessionId: string;
  private readonly spec: ResolvedSupervisorSpec;
  private readonly order: string[] = [];
  private readonly children = new Map<string, ChildRecord>();
  private restarts: number[] = [];
  private readonly queue: Job[] = [];
  private busy = false;
  private state: 'new' | 'running' | 'stopping' | 'exited' = 'new';
  private reason: ExitReason | undefined;
  private readonly exitListeners = new Set<(reason: ExitReason) => void>();
  private readonly listeners = new Set<(event: SupervisorEvent) => void>();
  private readonly shell: AnyActorRef | undefined;
  private seq = 0;

  constructor(
    spec: SupervisorSpec,
    private readonly runtime: SupervisorRuntime,
  ) {
    this.spec = resolveSupervisorSpec(spec);
    this.id = this.spec.id;
    if (runtime.inspect) {
      // The supervisor's own actor exists only to be seen: its events and
      // snapshot (the tree) flow through the same inspect observer as the
      // children's frames.
      this.shell = createActor(
        fromTransition(treeReducer, { id: this.id, children: {} } as TreeSnapshot),
        {
          id: this.id,
          clock: runtime.clock,
          inspect: runtime.inspect,
        },
      );
      this.shell.start();
      this.sessionId = this.shell.sessionId;
    } else {
      this.sessionId = this.id;
    }
  }

  /** @internal Starts the children in order; stops nothing on failure. */
  startInitial(): { ok: true } | { ok: false; childId: string; reason: ExitReason } {
    const specs = this.spec.children.map((c) => this.checkSpec(c));
    const seen = new Set<string>();
    for (const s of specs) {
      if (seen.has(s.id)) throw new ChildSpecError('id', `duplicate child id ${s.id}`);
      seen.add(s.id);
    }
    this.state = 'running';
    for (const spec of specs) {
      const child = this.addRecord(
        spec,
        spec.start && 'logic' in spec.start ? spec.start.input : undefined,
      );
      const failure = this.spawn(child);
      if (failure) return { ok: false, childId: spec.id, reason: failure };
    }
    return { ok: true };
  }

  /** Registers a listener for the typed system events. */
  subscribe(listener: (event: SupervisorEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  exitReason(): ExitReason | undefined {
    return this.reason;
  }

  onExit(listener: (reason: ExitReason) => void): () => void {
    if (this.reason !== undefined) {
      const reason = this.reason;
      queueMicrotask(() => listener(reason));
      return () => {};
    }
    this.exitListeners.add(listener);
    return () => this.exitListeners.delete(listener);
  }

  /** The children in start order, as OTP's which_children. */
  whichChildren(): ChildInfo[] {
    return this.order.map((id) => {
      const c = this.children.get(id)!;
      return {
        id,
        ref: c.spawned?.ref as AnyActorRef | Supervisor | undefined,
        type: c.spec.type,
        restart: c.spec.restart,
        status: c.status,
        restartCount: Math.max(0, c.starts - 1),
      };
    });
  }

  countChildren(): ChildCounts {
    let active = 0;
    let supervisors = 0;
    for (const c of this.children.values()) {
      if (c.spawned) active += 1;
      if (c.spec.type === 'supervisor') supervisors += 1;
    }
    return {
      specs: this.children.size,
      active,
      supervisors,
      workers: this.children.size - supervisors,
    };
  }

  /** The current incarnation of a child, if running. */
  child(id: string): AnyActorRef | Supervisor | undefined {
    return this.children.get(id)?.spawned?.ref as AnyActorRef | Supervisor | undefined;
  }

  /**
   * Starts a child after the initial ones: a full spec, or (with a template)
   * extra start arguments whose `input` is merged over the template's.
   */
  startChild(specOrArgs: ChildSpec | StartArgs): Promise<AnyActorRef | Supervisor> {
    return this.call(() => {
      if (this.children.size >= this.spec.maxChildren)
        throw new MaxChildrenError(this.spec.maxChildren);
      const spec = this.checkSpec(this.fromTemplate(specOrArgs));
      if (this.children.has(spec.id)) throw new AlreadyStartedError(spec.id);
      const input = 'logic' in spec.start ? spec.start.input : undefined;
      const child = this.addRecord(spec, input);
      const failure = this.spawn(child);
      if (failure) {
        this.remove(spec.id);
        throw new ChildStartError(spec.id, failure);
      }
      return child.spawned!.ref as AnyActorRef | Supervisor;
    });
  }

  /** Stops a child with its shutdown spec and forgets it. */
  terminateChild(id: string): Promise<void> {
    return this.call(async () => {
      const child = this.children.get(id);
      if (!child) throw new NotFoundError(id);
      await this.terminate(child);
      this.remove(id);
    });
  }

  /** Stops every child in reverse start order, then exits with `shutdown`. */
  shutdown(): Promise<void> {
    if (this.state === 'exited') return Promise.resolve();
    return new Promise((resolve) => {
      this.post(() => this.stopAll('shutdown'));
      this.onExit(() => resolve());
    });
  }

  /** Kills every child at once, in reverse order, and exits with `killed`. */
  kill(): void {
    if (this.state === 'exited') return;
    this.state = 'stopping';
    for (const id of [...this.order].reverse()) {
      const c = this.children.get(id)!;
      this.cancelTimer(c);
      const sp = c.spawned;
      c.spawned = undefined;
      c.status = 'stopped';
      if (sp) {
        sp.kill();
        this.emit({
          type: 'roundtable.child.exited',
          supervisorId: this.id,
          childId: id,
          reason: 'killed',
        });
      }
    }
    this.exit('killed');
  }

  // ---- internals -------------------------------------------------------

  private call<T>(fn: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.post(() => {
        if (this.state !== 'running') return reject(new NoProcError(this.id));
        try {
          const r = fn();
          if (r instanceof Promise) return r.then(resolve, reject);
          resolve(r);
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  private post(job: Job): void {
    this.queue.push(job);
    this.drain();
  }

  private drain(): void {
    while (!this.busy) {
      const job = this.queue.shift();
      if (!job) return;
      this.busy = true;
      const r = job();
      if (r instanceof Promise) {
        r.then(
          () => {
            this.busy = false;
            this.drain();
          },
          // A job rejecting is a supervisor bug; die loudly rather than hang.
          (error: unknown) => {
            this.busy = false;
            this.kill();
            throw error;
          },
        );
        return;
      }
      this.busy = false;
    }
  }

  private checkSpec(spec: unknown): ResolvedChildSpec {
    const resolved = validateChildSpec(spec);
    if (resolved.significant && this.spec.autoShutdown === 'never') {
      throw new ChildSpecError('significant', "needs the supervisor's autoShutdown to be set");
    }
    return resolved;
  }

  private fromTemplate(specOrArgs: ChildSpec | StartArgs): ChildSpec {
    if ('start' in specOrArgs) return specOrArgs;
    const t = this.spec.template;
    if (!t) throw new ChildSpecError('start', 'startChild needs a spec, or a supervisor template');
    this.seq += 1;
    const id = specOrArgs.id ?? `${t.id}-${this.seq}`;
    if (!('logic' in t.start)) return { ...t, id };
    const base = t.start.input;
    const extra = specOrArgs.input;
    const input =
      typeof base === 'object' && base !== null && typeof extra === 'object' && extra !== null
        ? { ...base, ...extra }
        : (extra ?? base);
    return { ...t, id, start: { logic: t.start.logic, input } };
  }

  private addRecord(spec: ResolvedChildSpec, input: unknown): ChildRecord {
    const child: ChildRecord = {
      spec,
      input,
      spawned: undefined,
      status: 'stopped',
      starts: 0,
      backoffAttempts: 0,
      timer: undefined,
    };
    this.children.set(spec.id, child);
    this.order.push(spec.id);
    return child;
  }

  private remove(id: string): void {
    this.children.delete(id);
    const at = this.order.indexOf(id);
    if (at >= 0) this.order.splice(at, 1);
  }

  /** Starts one incarnation; returns the failure reason, if any. */
  private spawn(child: ChildRecord): ExitReason | undefined {
    const result = spawnChild(
      child.spec,
      child.input,
      this.runtime,
      (spec, runtime) => new Supervisor(spec, runtime),
      (spawned, reason) => this.post(() => this.handleExit(child, spawned, reason)),
    );
    if (!result.ok) {
      child.status = 'stopped';
      return result.reason;
    }
    child.spawned = result.spawned;
    child.status = 'running';
    child.starts += 1;
    const { name } = child.spec;
    if (name && this.runtime.registry) this.runtime.registry.register(name, result.spawned.ref);
    this.emit({
      type: 'roundtable.child.started',
      supervisorId: this.id,
      childId: child.spec.id,
      sessionId: result.spawned.sessionId,
      restartCount: child.starts - 1,
    });
    return undefined;
  }

  private handleExit(
    child: ChildRecord,
    spawned: Spawned,
    reason: ExitReason,
  ): void | Promise<void> {
    // Stale: we stopped this incarnation ourselves (terminate already reported it).
    if (child.spawned !== spawned || this.children.get(child.spec.id) !== child) return;
    child.spawned = undefined;
    child.status = 'stopped';
    this.emit({
      type: 'roundtable.child.exited',
      supervisorId: this.id,
      childId: child.spec.id,
      reason,
    });
    return this.afterExit(child, reason, spawned.startedAt);
  }

  private afterExit(
    child: ChildRecord,
    reason: ExitReason,
    startedAt: number,
  ): void | Promise<void> {
    if (this.state !== 'running') return;
    const id = child.spec.id;
    if (!shouldRestart(child.spec.restart, reason)) {
      // OTP drops a temporary child's spec; a transient one stays, stopped.
      if (child.spec.restart === 'temporary') this.remove(id);
      if (child.spec.significant) {
        let alive = 0;
        for (const c of this.children.values())
          if (c.spec.significant && c.status !== 'stopped') alive += 1;
        if (autoShutdownNow(this.spec.autoShutdown, alive)) return this.stopAll('shutdown');
      }
      return;
    }
    const now = this.runtime.clock.now();
    this.restarts = addRestart(this.restarts, now, this.spec.periodMs);
    if (intensityExceeded(this.restarts, this.spec.intensity)) {
      this.emit({
        type: 'roundtable.supervisor.intensity_reached',
        supervisorId: this.id,
        intensity: this.spec.intensity,
        periodMs: this.spec.periodMs,
      });
      return this.stopAll('shutdown');
    }
    let delayMs = 0;
    if (child.spec.backoff) {
      const d = nextBackoff(
        child.backoffAttempts,
        now - startedAt,
        child.spec.backoff,
        this.runtime.random,
      );
      if (d.kind === 'give_up') {
        this.emit({
          type: 'roundtable.child.backoff_exhausted',
          supervisorId: this.id,
          childId: id,
        });
        return;
      }
      child.backoffAttempts = d.attempt;
      delayMs = d.delayMs;
    }
    const group = childrenToRestart(this.spec.strategy, this.order, id);
    const siblings = group.filter((g) => g !== id).map((g) => this.children.get(g)!);
    child.status = 'restarting';
    this.emit({ type: 'roundtable.child.restarting', supervisorId: this.id, childId: id, delayMs });
    if (siblings.length === 0) return this.schedule([id], delayMs);
    return (async () => {
      for (const s of [...siblings].reverse()) await this.terminate(s);
      const ids: string[] = [];
      for (const g of group) {
        const c = this.children.get(g)!;
        // OTP: a temporary sibling taken down by a group restart is not restarted.
        if (g !== id && c.spec.restart === 'temporary') this.remove(g);
        else {
          c.status = 'restarting';
          ids.push(g);
        }
      }
      return this.schedule(ids, delayMs);
    })();
  }

  private schedule(ids: string[], delayMs: number): void | Promise<void> {
    if (delayMs <= 0) return this.startGroup(ids);
    const timer: { id: unknown } = { id: undefined };
    timer.id = this.runtime.clock.setTimeout(() => {
      for (const g of ids) {
        const c = this.children.get(g);
        if (c?.timer === timer) c.timer = undefined;
      }
      this.post(() => this.startGroup(ids));
    }, delayMs);
    for (const g of ids) this.children.get(g)!.timer = timer;
  }

  private startGroup(ids: string[]): void | Promise<void> {
    if (this.state !== 'running') return;
    for (const g of ids) {
      const c = this.children.get(g);
      if (c?.status !== 'restarting' || c.timer) continue;
      const failure = this.spawn(c);
      if (failure) {
        // A failed restart is one more exit: it counts toward the intensity.
        this.emit({
          type: 'roundtable.child.exited',
          supervisorId: this.id,
          childId: g,
          reason: failure,
        });
        return this.afterExit(c, failure, this.runtime.clock.now());
      }
    }
  }

  private cancelTimer(c: ChildRecord): void {
    if (c.timer) this.runtime.clock.clearTimeout(c.timer.id);
    c.timer = undefined;
  }

  /**
   * Stops one child by its shutdown spec. We wait for the child's own exit
   * (not our request) so a child that ignores the request still ends: at the
   * deadline it is killed, and the kill is what we then observe.
   */
  private terminate(c: ChildRecord): void | Promise<void> {
    this.cancelTimer(c);
    c.status = 'stopped';
    const sp = c.spawned;
    if (!sp) return;
    c.spawned = undefined;
    const id = c.spec.id;
    const report = (reason: ExitReason) =>
      this.emit({ type: 'roundtable.child.exited', supervisorId: this.id, childId: id, reason });
    if (c.spec.shutdown === 'brutal_kill') {
      sp.kill();
      report(sp.reason ?? 'killed');
      return;
    }
    if (!sp.requestStop()) {
      report(sp.reason ?? 'shutdown');
      return;
    }
    const exited = sp.whenExited();
    if (c.spec.shutdown === 'infinity') return exited.then(report);
    const clock = this.runtime.clock;
    const timer = clock.setTimeout(() => sp.kill(), c.spec.shutdown);
    return exited.then((reason) => {
      clock.clearTimeout(timer);
      report(reason);
    });
  }

  private async stopAll(reason: ExitReason): Promise<void> {
    if (this.state === 'exited' || this.state === 'stopping') return;
    this.state = 'stopping';
    for (const id of [...this.order].reverse()) {
      const c = this.children.get(id);
      if (c) await this.terminate(c);
    }
    this.exit(reason);
  }

  private exit(reason: ExitReason): void {
    if (this.state === 'exited') return;
    this.state = 'exited';
    this.reason = reason;
    for (const c of this.children.values())
      if (c.spec.name) this.runtime.registry?.unregister(c.spec.name);
    this.emit({ type: 'roundtable.supervisor.shutdown', supervisorId: this.id, reason });
    this.shell?.stop();
    const listeners = [...this.exitListeners];
    this.exitListeners.clear();
    for (const l of listeners) l(reason);
  }

  private emit(event: SupervisorEvent): void {
    this.shell?.send(event);
    for (const l of this.listeners) l(event);
  }
}

/**
 * Starts a supervisor and its children in order. If a child fails to start,
 * the ones already started are stopped in reverse order and the returned
 * promise rejects with a `ChildStartError` naming the child.
 */
export async function startSupervisor(
  spec: SupervisorSpec,
  runtime: Partial<SupervisorRuntime> = {},
): Promise<Supervisor> {
  const sup = new Supervisor(spec, resolveRuntime(runtime));
  const started = sup.startInitial();
  if (!started.ok) {
    await sup.shutdown();
    throw new ChildStartError(started.childId, started.reason);
  }
  return sup;
}
