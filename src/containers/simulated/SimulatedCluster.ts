/**
 * An in-memory Swarm on an injected clock: nodes, one service per session,
 * containers with start times and their own `/tmp`, scripted commands, and
 * faults on demand. Tests use it to drive reschedules, node loss, image rolls
 * and API outages in milliseconds; `npm start` uses it when there is no Docker.
 *
 * The cluster is the "engine"; `SimulatedBackend` is the client that talks to
 * it through `api`, which is where API faults bite.
 */
import type { Clock } from '../Clock.js';
import { ContainerError } from '../ContainerError.js';
import { ApiFaults } from './ApiFaults.js';
import { defaultCommands, type SimCommandRegistry } from './commands.js';
import { execWrapper } from './execWrapper.js';
import type { RunningExec } from './playScript.js';
import type { ExecRecord, SimContainer, SimService } from './simulatedState.js';

export type { ExecRecord, SimContainer, SimService } from './simulatedState.js';

export interface SimulatedClusterOptions {
  clock: Clock;
  nodes?: readonly string[];
  /** How long a lost container takes to come back (Swarm's restart delay). */
  rescheduleDelayMs?: number;
  commands?: SimCommandRegistry;
}

export class SimulatedCluster {
  readonly clock: Clock;
  private readonly nodes = new Map<string, { up: boolean }>();
  private readonly services = new Map<string, SimService>();
  private readonly running = new Map<string, Set<RunningExec>>();
  private readonly execs: ExecRecord[] = [];
  private readonly rescheduleDelayMs: number;
  private readonly commands: SimCommandRegistry;
  private nextContainer = 1;
  private nextNode = 0;
  private readonly faults: ApiFaults;
  /** Every session a service was asked for: `reschedule` tells an ended run from an unknown id. */
  private readonly started = new Set<string>();
  /** Image to the reason every task on it is rejected with. */
  private readonly refused = new Map<string, string>();

  constructor(options: SimulatedClusterOptions) {
    this.clock = options.clock;
    for (const node of options.nodes ?? ['node-1', 'node-2']) this.nodes.set(node, { up: true });
    this.rescheduleDelayMs = options.rescheduleDelayMs ?? 1000;
    this.commands = options.commands ?? defaultCommands;
    this.faults = new ApiFaults(options.clock);
  }

  // ---- faults ------------------------------------------------------------

  /** Every API call fails with `unavailable` until the clock reaches `untilMs`. */
  failApi(untilMs: number): void {
    this.faults.fail(untilMs);
  }

  /**
   * The engine cannot run `image` (as Swarm when no node can get it): a
   * service on it is created, but its task is rejected with `reason` and no
   * container starts, so `start` fails `rejected` with that reason. Until
   * `acceptImage(image)`.
   */
  rejectImage(image: string, reason = `No such image: ${image}`): void {
    this.refused.set(image, reason);
  }

  acceptImage(image: string): void {
    this.refused.delete(image);
  }

  /** Every API call stalls for `forMs` from now, then answers. */
  hangApi(forMs: number): void {
    this.faults.hang(forMs);
  }

  /** API calls stalled by `hangApi` and not answered yet: they wait on the clock. */
  stalledCalls(): number {
    return this.faults.stalledCalls();
  }

  /**
   * Swarm moves the service: the container dies (and its exec with it), a
   * new one starts later. True when a container was moved; false when the
   * session's run has no service now (it ended, or its start failed). An id
   * no run was ever started for throws `not_found`: a task's id, a typo or a
   * session not started yet once did nothing, silently, and the test then
   * asserted on a reschedule that never happened.
   */
  reschedule(sessionId: string): boolean {
    const service = this.serviceOf(sessionId);
    if (service) {
      this.replaceContainer(service, this.rescheduleDelayMs);
      return true;
    }
    if (this.started.has(sessionId)) return false;
    throw new ContainerError(
      'not_found',
      `reschedule: no run of ${JSON.stringify(sessionId)} was ever started on this cluster; ` +
        "pass a started session's id (createTask's sessionId, a card's sessionId), not a task's",
    );
  }

  /** The node dies: its containers come back on the other nodes after the restart delay. */
  killNode(node: string): void {
    const state = this.nodes.get(node);
    if (!state) throw this.noNode(node);
    state.up = false;
    for (const service of this.services.values()) {
      if (service.container?.node === node) this.replaceContainer(service, this.rescheduleDelayMs);
    }
  }

  /**
   * The node is back. Services left with no container while no node was up
   * (Swarm's pending tasks) are placed after the restart delay.
   */
  reviveNode(node: string): void {
    const state = this.nodes.get(node);
    if (!state) throw this.noNode(node);
    if (state.up) return;
    state.up = true;
    for (const service of this.services.values())
      if (service.container === null && service.taskError === null)
        this.replaceContainer(service, this.rescheduleDelayMs);
  }

  /** Rolls every service onto `image`: each gets a new container after the restart delay. */
  rollImage(image: string): string[] {
    const rolled: string[] = [];
    for (const service of this.services.values()) {
      if (service.image === image) continue;
      service.image = image;
      this.replaceContainer(service, this.rescheduleDelayMs);
      rolled.push(service.name);
    }
    return rolled;
  }

  private noNode(node: string): ContainerError {
    return new ContainerError(
      'not_found',
      `no node ${JSON.stringify(node)}; the cluster's nodes are ${this.nodeNames().join(', ')}`,
    );
  }

  // ---- inspection for tests ----------------------------------------------

  execLog(sessionId?: string): ExecRecord[] {
    return this.execs.filter((e) => sessionId === undefined || e.sessionId === sessionId);
  }

  serviceOf(sessionId: string): SimService | undefined {
    for (const service of this.services.values()) {
      if (service.sessionId === sessionId) return service;
    }
    return undefined;
  }

  nodeNames(): string[] {
    return [...this.nodes.keys()];
  }

  // ---- the engine API, subject to faults ---------------------------------

  readonly api = {
    createService: (spec: Omit<SimService, 'container' | 'taskError'>) => {
      // Before the faults: a start that failed or stalls was still started.
      this.started.add(spec.sessionId);
      return this.call(() => {
        if (this.services.has(spec.name)) {
          throw new ContainerError('conflict', `service ${spec.name} already exists`);
        }
        // Key by key: a spread followed by more keys takes V8's slow path (one per job).
        const service: SimService = {
          name: spec.name,
          sessionId: spec.sessionId,
          image: spec.image,
          env: spec.env,
          labels: spec.labels,
          container: null,
          taskError: null,
        };
        // Placed first: with no node up the call fails and leaves no service behind.
        this.place(service);
        this.services.set(spec.name, service);
        // Swarm says this through the task's status; one answer is enough here.
        return { name: spec.name, taskError: service.taskError };
      });
    },
    inspectService: (name: string) =>
      this.call(() => {
        const service = this.services.get(name);
        if (!service) throw new ContainerError('not_found', `no service ${name}`);
        const c = service.container;
        return {
          image: service.image,
          container: c ? { id: c.id, node: c.node, startedAt: c.startedAt } : null,
          taskError: service.taskError,
        };
      }),
    /** Docker's label filter: every term (`key` or `key=value`) must hold. */
    listServices: (filters: { label?: readonly string[] } = {}) =>
      this.call(() =>
        [...this.services.values()]
          .filter((s) => hasLabels(s, filters.label))
          .map((s) => ({
            name: s.name,
            sessionId: s.sessionId,
            image: s.image,
          })),
      ),
    updateImage: (name: string, image: string) =>
      this.call(() => {
        const service = this.services.get(name);
        if (!service) throw new ContainerError('not_found', `no service ${name}`);
        service.image = image;
        this.replaceContainer(service, this.rescheduleDelayMs);
      }),
    removeService: (name: string) =>
      this.call(() => {
        const service = this.services.get(name);
        if (!service) throw new ContainerError('not_found', `no service ${name}`);
        if (service.container) this.loseExecs(service.container);
        this.services.delete(name);
      }),
    readFile: (name: string, path: string) =>
      this.call(() => {
        const c = this.services.get(name)?.container;
        if (!c) throw new ContainerError('not_found', `service ${name} has no running container`);
        return c.tmp.get(path) ?? null;
      }),
    /** Runs `argv` (the wrapper) in the service's current container. */
    /** Docker's `/_ping`: answers, subject to the faults like every call. */
    ping: () => this.call(() => 'OK' as const),
    exec: (
      name: string,
      argv: readonly string[],
      env: Readonly<Record<string, string>>,
      onOutput: (chunk: string) => void,
    ) => this.call(() => this.startExec(name, argv, env, onOutput)),
  };

  // ---- internals ---------------------------------------------------------

  /** Applies the API faults to one call. */
  private call<T>(fn: () => T): Promise<T> {
    return this.faults.call(fn);
  }

  /**
   * Round-robin over the nodes that are up, `avoid` left out unless it is
   * the only one. Counted in place rather than filtered into arrays: it runs
   * for every container the cluster starts.
   */
  private pickNode(avoid?: string): string {
    let up = 0;
    let others = 0;
    for (const [n, s] of this.nodes) {
      if (!s.up) continue;
      up += 1;
      if (n !== avoid) others += 1;
    }
    if (up === 0) throw new ContainerError('unavailable', 'no node is up');
    const skip = others > 0 ? avoid : undefined;
    let k = this.nextNode % (others > 0 ? others : up);
    this.nextNode += 1;
    for (const [n, s] of this.nodes) {
      if (!s.up || (skip !== undefined && n === skip)) continue;
      if (k === 0) return n;
      k -= 1;
    }
    throw new ContainerError('unavailable', 'no node is up');
  }

  private anyNodeUp(): boolean {
    for (const s of this.nodes.values()) if (s.up) return true;
    return false;
  }

  /** Starts the service's container, unless its image is refused: then the task is rejected. */
  private place(service: SimService, avoid?: string): void {
    service.taskError = this.refused.get(service.image) ?? null;
    if (service.taskError !== null) return;
    service.container = {
      id: `c${this.nextContainer++}`,
      node: this.pickNode(avoid),
      startedAt: this.clock.now(),
      image: service.image,
      tmp: new Map(),
    };
  }

  private replaceContainer(service: SimService, delayMs: number): void {
    const old = service.container;
    if (old) this.loseExecs(old);
    service.container = null;
    const start = () => {
      if (this.services.get(service.name) !== service || service.container) return;
      // No node up: the task waits, pending, for `reviveNode`, as Swarm's
      // does; a throw here would reach whoever moved the clock.
      if (!this.anyNodeUp()) return;
      this.place(service, old?.node);
    };
    if (delayMs <= 0) start();
    else this.clock.setTimeout(start, delayMs);
  }

  private loseExecs(container: SimContainer): void {
    for (const exec of this.running.get(container.id) ?? []) exec.lose();
    this.running.delete(container.id);
  }

  private startExec(
    name: string,
    argv: readonly string[],
    env: Readonly<Record<string, string>>,
    onOutput: (chunk: string) => void,
  ): { startedAt: number; done: Promise<{ exitCode: number }> } {
    const service = this.services.get(name);
    const container = service?.container;
    if (!service || !container) {
      throw new ContainerError('not_found', `service ${name} has no running container`);
    }
    const running = this.running.get(container.id) ?? new Set<RunningExec>();
    this.running.set(container.id, running);
    return execWrapper({
      clock: this.clock,
      commands: this.commands,
      service,
      container,
      running,
      log: this.execs,
      argv,
      env,
      onOutput,
    });
  }
}

function hasLabels(service: SimService, terms: readonly string[] = []): boolean {
  return terms.every((term) => {
    const eq = term.indexOf('=');
    if (eq < 0) return Object.hasOwn(service.labels, term);
    return service.labels[term.slice(0, eq)] === term.slice(eq + 1);
  });
}
