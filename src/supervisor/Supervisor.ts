/**
 * The supervisor: a runtime shell that starts XState actors from child specs,
 * turns every way they can end into an exit reason, and restarts them by
 * OTP's rules. Its jobs (exits, startChild, shutdown) go through a Mailbox.
 * Which specs it takes is childAdmission's; starting one incarnation is
 * startIncarnation's; what happens after an exit is the RestartHandler's;
 * its own life (running, stopping every child, the exit) is
 * SupervisorLifecycle's; telling listeners, guarded so that a throwing
 * subscriber cannot stop a restart, is SupervisorOutbox's. A tree is started
 * by startSupervisor.ts.
 */
import type { ActorRefFrom, AnyActorLogic, AnyActorRef } from 'xstate';
import {
  type ChildCounts,
  type ChildRecord,
  type ChildStatus,
  ChildTable,
  type ChildInfo as TableRow,
} from './ChildTable.js';
import { admitInitialChildren, admitStartedChild } from './childAdmission.js';
import type { ChildSpec, SupervisorChildSpec, WorkerChildSpec } from './childSpec.js';
import { ChildTypeError, NotFoundError, SupervisorJobError } from './errors.js';
import type { SupervisorEvent } from './events.js';
import { type ExitSignal, exitOneChild, registerShell } from './exitChild.js';
import type { ExitReason } from './exitReason.js';
import type { StartArgs } from './fromTemplate.js';
import { shellObserver } from './inspectionGate.js';
import { inspectionShell } from './inspectionShell.js';
import { Mailbox } from './Mailbox.js';
import { noteInspected } from './monitorInspection.js';
import { RestartHandler } from './RestartHandler.js';
import { SupervisorLifecycle } from './SupervisorLifecycle.js';
import { SupervisorOutbox } from './SupervisorOutbox.js';
import type { ExitSink, NestedSupervisor, Spawned } from './spawnChild.js';
import { type IncarnationDeps, startAddedChild, startIncarnation } from './startIncarnation.js';
import {
  type ResolvedSupervisorSpec,
  resolveSupervisorSpec,
  type SupervisorRuntime,
  type SupervisorSpec,
} from './supervisorSpec.js';
import type { ExitSource } from './watchExit.js';

export type { ChildCounts, ChildStatus } from './ChildTable.js';

/** One row of `whichChildren()`: narrow on `type` to get a typed `ref`. */
export type ChildInfo = TableRow<Supervisor>;

export type { StartArgs } from './fromTemplate.js';

export class Supervisor implements ExitSource, NestedSupervisor {
  readonly id: string;
  readonly sessionId: string;
  private readonly spec: ResolvedSupervisorSpec;
  private readonly children = new ChildTable();
  private readonly mailbox = new Mailbox((error) => this.crash(error));
  private readonly restarter: RestartHandler;
  private readonly life: SupervisorLifecycle;
  private readonly out: SupervisorOutbox;
  private seq = 0;
  /** Where every child's incarnation reports its exit; the child record is the token. */
  private readonly sink: ExitSink<ChildRecord> = {
    childExited: (child, spawned, reason) =>
      this.mailbox.post(() => this.handleExit(child, spawned, reason)),
  };
  private readonly incarnation: IncarnationDeps;

  constructor(spec: SupervisorSpec, runtime: SupervisorRuntime) {
    this.spec = resolveSupervisorSpec(spec);
    this.id = this.spec.id;
    const shell = inspectionShell(this.id, runtime);
    this.sessionId = shell?.sessionId ?? this.id;
    const out = new SupervisorOutbox(this.id, shell, runtime.onError);
    this.out = out;
    const { children } = this;
    this.life = new SupervisorLifecycle({ id: this.id, runtime, children, out, shell });
    // Who sees this tree's monitors (the gate's observer, always fed), if anyone.
    const seen = shellObserver(runtime.inspect);
    this.incarnation = { supervisorId: this.id, runtime, nested, sink: this.sink, seen, out };
    this.restarter = new RestartHandler({
      id: this.id,
      spec: this.spec,
      runtime,
      children,
      isRunning: () => this.life.running,
      emit: (event) => out.emit(event),
      spawn: (child) => startIncarnation(child, this.incarnation),
      terminate: (child) => this.life.terminate(child),
      stopAll: (reason) => this.life.stopAll(reason),
      post: (job) => this.mailbox.post(job),
    });
    if (shell && seen) {
      registerShell(shell, this);
      noteInspected(this, seen);
    }
  }

  /** @internal Starts the children in order; stops nothing on failure. */
  startInitial(): { ok: true } | { ok: false; childId: string; reason: ExitReason } {
    const specs = admitInitialChildren(this.spec);
    this.life.started();
    for (const spec of specs) {
      const child = this.children.add(
        spec,
        spec.start && 'logic' in spec.start ? spec.start.input : undefined,
      );
      const failure = startIncarnation(child, this.incarnation);
      if (failure) return { ok: false, childId: spec.id, reason: failure };
    }
    return { ok: true };
  }

  /**
   * Registers a listener for the typed system events. A listener that
   * throws is reported to the runtime's `onError` as a `ListenerError`; the
   * supervisor carries on as if it had returned.
   */
  subscribe(listener: (event: SupervisorEvent) => void): () => void {
    return this.out.events.add(listener);
  }

  exitReason(): ExitReason | undefined {
    return this.life.reason;
  }

  onExit(listener: (reason: ExitReason) => void): () => void {
    const reason = this.life.reason;
    if (reason !== undefined) {
      this.out.tellLate(listener, reason);
      return () => {};
    }
    return this.out.exits.add(listener);
  }

  /**
   * The children in start order, as OTP's which_children, as the table
   * stands now: an exit already queued behind a running job (a graceful
   * stop, a group restart) is not in it yet. `await sync()` first for
   * OTP's answer, which is a call served in mailbox order.
   */
  whichChildren(): ChildInfo[] {
    return this.children.whichChildren(asSupervisor);
  }

  /**
   * Resolves once the mailbox has run every job queued before this call
   * (exits already reported, restarts, `startChild`, `terminateChild`), so
   * `whichChildren()` then answers as OTP's call would. Never rejects, also
   * after the exit. A backoff restart waits on the clock, not in the mailbox.
   */
  sync(): Promise<void> {
    return new Promise((resolve) => this.mailbox.post(resolve));
  }

  /** One child's status (O(1), unlike `whichChildren()`); undefined when there is no such child. */
  childStatus(id: string): ChildStatus | undefined {
    return this.children.get(id)?.status;
  }

  countChildren(): ChildCounts {
    return this.children.countChildren();
  }

  /**
   * The running incarnation of worker child `id`, or `undefined` while it is
   * not running (or there is no such child). Throws a `ChildTypeError` when
   * `id` is a supervisor child: that one is `childSupervisor(id)`.
   */
  child(id: string): AnyActorRef | undefined {
    const c = this.children.get(id);
    if (c?.spec.type === 'supervisor') throw new ChildTypeError(id, 'supervisor');
    return c?.spawned?.type === 'worker' ? c.spawned.ref : undefined;
  }

  /** As `child(id)`, for a nested supervisor; a `ChildTypeError` for a worker. */
  childSupervisor(id: string): Supervisor | undefined {
    const c = this.children.get(id);
    if (c?.spec.type === 'worker') throw new ChildTypeError(id, 'worker');
    return c?.spawned?.type === 'supervisor' ? asSupervisor(c.spawned.ref) : undefined;
  }

  /**
   * Starts a child after the initial ones and resolves with it, typed by its
   * spec: a worker's actor ref (`ActorRefFrom` its logic), or the nested
   * `Supervisor`. With a template, extra start arguments whose `input` is
   * merged over the template's start a worker; a supervisor template is
   * started by `startChildSupervisor(args)` (a `ChildTypeError` here).
   */
  startChild(spec: SupervisorChildSpec): Promise<Supervisor>;
  startChild<L extends AnyActorLogic>(spec: WorkerChildSpec<L>): Promise<ActorRefFrom<L>>;
  startChild(specOrArgs: ChildSpec | StartArgs): Promise<AnyActorRef>;
  startChild(specOrArgs: ChildSpec | StartArgs): Promise<AnyActorRef | Supervisor> {
    return this.start(specOrArgs, 'start' in specOrArgs ? undefined : 'worker');
  }

  /** `startChild(args)` for a dynamic supervisor whose template is a supervisor. */
  startChildSupervisor(args: StartArgs): Promise<Supervisor> {
    return this.start(args, 'supervisor') as Promise<Supervisor>;
  }

  private start(
    specOrArgs: ChildSpec | StartArgs,
    want: 'worker' | 'supervisor' | undefined,
  ): Promise<AnyActorRef | Supervisor> {
    // Through the mailbox like any job; when it is idle the job runs now,
    // which is what posting it would do, without queueing a closure.
    return this.mailbox.callSync(this.life.admit, () => {
      const spec = admitStartedChild(this.spec, this.children, {
        specOrArgs,
        want,
        nextSeq: () => ++this.seq,
      });
      const spawned = startAddedChild(this.children, spec, this.incarnation);
      return spawned.type === 'worker' ? spawned.ref : asSupervisor(spawned.ref);
    });
  }

  /** Stops a child with its shutdown spec and forgets it. */
  terminateChild(id: string): Promise<void> {
    return this.mailbox.call(this.life.admit, async () => {
      const child = this.children.get(id);
      if (!child) throw new NotFoundError(id);
      await this.life.terminate(child);
      this.children.remove(id);
    });
  }

  /**
   * OTP's `exit(Pid, Reason)` on a child (exitChild.ts): stopped now with
   * `reason`, then restarted or not by its restart type, counting toward the
   * intensity. Rejects with `NotFoundError` or `NoProcError` (not running).
   */
  exitChild(id: string, reason: ExitSignal = 'kill'): Promise<void> {
    return this.mailbox.call(this.life.admit, () =>
      exitOneChild(this.children.get(id), id, reason, (c, sp, why) => this.handleExit(c, sp, why)),
    );
  }

  /** Stops every child in reverse start order, then exits with `shutdown`. */
  shutdown(): Promise<void> {
    if (this.life.exited) return Promise.resolve();
    return new Promise((resolve) => {
      this.mailbox.post(() => this.life.stopAll('shutdown'));
      this.onExit(() => resolve());
    });
  }

  /** Kills every child at once, in reverse order, and exits with `killed`. */
  kill(): void {
    this.life.killAll('killed');
  }

  // ---- internals -------------------------------------------------------

  /**
   * A job failed: our state may be half-updated, so carrying on could leave
   * a child "restarting" for ever. Crash as an OTP supervisor does (kill the
   * children, exit abnormally) and let the parent restart the subtree from
   * its specs; calls queued behind the job then get NoProcError.
   */
  private crash(error: unknown): void {
    this.out.report(new SupervisorJobError(this.id, error));
    this.life.killAll({ error });
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
    this.life.reportStopped(child.spec.id, reason);
    return this.restarter.afterExit(child, reason, spawned.startedAt);
  }
}

/** Makes a nested supervisor; a declaration, so it exists before any Supervisor does. */
function nested(spec: SupervisorSpec, runtime: SupervisorRuntime): Supervisor {
  return new Supervisor(spec, runtime);
}

/**
 * A nested supervisor of this tree as the class it is: `nested` above makes
 * every one, so the check cannot fail unless that changes.
 */
function asSupervisor(n: NestedSupervisor): Supervisor {
  if (n instanceof Supervisor) return n;
  throw new TypeError('a nested supervisor that is not a Supervisor');
}
