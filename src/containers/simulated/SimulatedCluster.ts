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
import { markerPath, outputPath, WRAPPER_SCRIPT } from '../wrapper.js';
import { defaultCommands, type SimCommandRegistry, scriptFor } from './commands.js';

export interface SimContainer {
  id: string;
  node: string;
  startedAt: number;
  image: string;
  /** The container's `/tmp`: file path to contents. */
  tmp: Map<string, string>;
}

export interface SimService {
  name: string;
  sessionId: string;
  image: string;
  env: Readonly<Record<string, string>>;
  labels: Readonly<Record<string, string>>;
  /** Null between a container's death and its replacement. */
  container: SimContainer | null;
}

/** One exec the cluster ran, kept so tests can prove nothing ran twice. */
export interface ExecRecord {
  sessionId: string;
  containerId: string;
  node: string;
  atMs: number;
  command: readonly string[];
}

export interface SimulatedClusterOptions {
  clock: Clock;
  nodes?: readonly string[];
  /** How long a lost container takes to come back (Swarm's restart delay). */
  rescheduleDelayMs?: number;
  commands?: SimCommandRegistry;
}

interface RunningExec {
  timers: unknown[];
  lose: () => void;
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
  private failUntil = -1;
  private hangUntil = -1;

  constructor(options: SimulatedClusterOptions) {
    this.clock = options.clock;
    for (const node of options.nodes ?? ['node-1', 'node-2']) this.nodes.set(node, { up: true });
    this.rescheduleDelayMs = options.rescheduleDelayMs ?? 1000;
    this.commands = options.commands ?? defaultCommands;
  }

  // ---- faults ------------------------------------------------------------

  /** Every API call fails with `unavailable` until the clock reaches `untilMs`. */
  failApi(untilMs: number): void {
    this.failUntil = untilMs;
  }

  /** Every API call stalls for `forMs` from now, then answers. */
  hangApi(forMs: number): void {
    this.hangUntil = this.clock.now() + forMs;
  }

  /** Swarm moves the service: the container dies (and its exec with it), a new one starts later. */
  reschedule(sessionId: string): void {
    const service = this.serviceOf(sessionId);
    if (service) this.replaceContainer(service, this.rescheduleDelayMs);
  }

  /** The node dies: its containers come back on the other nodes after the restart delay. */
  killNode(node: string): void {
    const state = this.nodes.get(node);
    if (!state) throw new ContainerError('not_found', `no node ${node}`);
    state.up = false;
    for (const service of this.services.values()) {
      if (service.container?.node === node) this.replaceContainer(service, this.rescheduleDelayMs);
    }
  }

  reviveNode(node: string): void {
    const state = this.nodes.get(node);
    if (state) state.up = true;
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
    createService: (spec: Omit<SimService, 'container'>) =>
      this.call(() => {
        if (this.services.has(spec.name)) {
          throw new ContainerError('conflict', `service ${spec.name} already exists`);
        }
        const service: SimService = { ...spec, container: null };
        this.services.set(spec.name, service);
        service.container = this.newContainer(service);
        return { name: spec.name };
      }),
    inspectService: (name: string) =>
      this.call(() => {
        const service = this.services.get(name);
        if (!service) throw new ContainerError('not_found', `no service ${name}`);
        const c = service.container;
        return {
          image: service.image,
          container: c ? { id: c.id, node: c.node, startedAt: c.startedAt } : null,
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
    const now = this.clock.now();
    if (now < this.failUntil) {
      return Promise.reject(new ContainerError('unavailable', 'simulated API outage'));
    }
    if (now < this.hangUntil) {
      return new Promise<T>((resolve, reject) => {
        this.clock.setTimeout(() => {
          try {
            resolve(fn());
          } catch (error) {
            reject(error);
          }
        }, this.hangUntil - now);
      });
    }
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private pickNode(avoid?: string): string {
    const up = [...this.nodes].filter(([, s]) => s.up).map(([n]) => n);
    const candidates = up.filter((n) => n !== avoid);
    const pool = candidates.length > 0 ? candidates : up;
    if (pool.length === 0) throw new ContainerError('unavailable', 'no node is up');
    const node = pool[this.nextNode % pool.length] as string;
    this.nextNode += 1;
    return node;
  }

  private newContainer(service: SimService, avoid?: string): SimContainer {
    return {
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
      service.container = this.newContainer(service, old?.node);
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
    if (argv[0] !== 'sh' || argv[2] !== WRAPPER_SCRIPT) {
      throw new ContainerError('invalid_argument', 'the simulated cluster only runs the wrapper');
    }
    const sessionId = env.ROUNDTABLE_SESSION_ID ?? service.sessionId;
    const command = argv.slice(4);
    const startedAt = this.clock.now();
    this.execs.push({
      sessionId,
      containerId: container.id,
      node: container.node,
      atMs: startedAt,
      command,
    });
    const out = outputPath(sessionId);
    const marker = markerPath(sessionId);
    container.tmp.delete(marker);
    container.tmp.set(out, '');
    const script = scriptFor(this.commands, command);
    const execs = this.running.get(container.id) ?? new Set<RunningExec>();
    this.running.set(container.id, execs);
    const done = new Promise<{ exitCode: number }>((resolve, reject) => {
      const exec: RunningExec = {
        timers: [],
        lose: () => {
          for (const t of exec.timers) this.clock.clearTimeout(t);
          reject(new ContainerError('exec_lost', `container ${container.id} of ${name} went away`));
        },
      };
      execs.add(exec);
      // Every timer is set up front (a clock jump fires them all at once);
      // each emits all steps due by its time, so output stays in order and
      // precedes the marker whatever order same-instant timers fire in.
      const steps = [...script.output].sort((a, b) => a.atMs - b.atMs);
      const endAt = Math.max(script.durationMs, ...steps.map((s) => s.atMs));
      let emitted = 0;
      const emitUpTo = (atMs: number) => {
        for (let step = steps[emitted]; step && step.atMs <= atMs; step = steps[emitted]) {
          emitted += 1;
          container.tmp.set(out, (container.tmp.get(out) ?? '') + step.text);
          onOutput(step.text);
        }
      };
      for (const step of steps) {
        exec.timers.push(this.clock.setTimeout(() => emitUpTo(step.atMs), step.atMs));
      }
      exec.timers.push(
        this.clock.setTimeout(() => {
          emitUpTo(Number.POSITIVE_INFINITY);
          execs.delete(exec);
          container.tmp.set(marker, `${script.exitCode}\n`);
          resolve({ exitCode: script.exitCode });
        }, endAt),
      );
    });
    // The owner may never await `done` (it restarted); a lost exec is not an unhandled error.
    done.catch(() => undefined);
    return { startedAt, done };
  }
}

function hasLabels(service: SimService, terms: readonly string[] = []): boolean {
  return terms.every((term) => {
    const eq = term.indexOf('=');
    if (eq < 0) return Object.hasOwn(service.labels, term);
    return service.labels[term.slice(0, eq)] === term.slice(eq + 1);
  });
}
