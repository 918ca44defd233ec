/**
 * A custom backend: the local backend, with every start and removal written
 * to an audit log the application keeps (here an array; a table or a log
 * shipper in a real app). It implements `ContainerBackend` by delegation, so
 * the project's contract suite (auditedBackend.test.ts) checks that it still
 * keeps every promise the runtime relies on.
 */
import {
  type AttachOptions,
  type ContainerBackend,
  LocalBackend,
  type LocalBackendOptions,
  type Observation,
  type PingResult,
  type RepinResult,
  type RunExit,
  type RunOutput,
  type RunRef,
  type RunSpec,
  type StartResult,
} from 'roundtable';

export interface AuditEntry {
  at: Date;
  action: 'start' | 'remove';
  sessionId: string;
  command?: readonly string[];
}

export class AuditedBackend implements ContainerBackend {
  readonly kind = 'local' as const;
  readonly adoptable: boolean;
  readonly namespace: string;
  readonly log: AuditEntry[] = [];
  private readonly inner: LocalBackend;

  constructor(options: LocalBackendOptions) {
    this.inner = new LocalBackend(options);
    this.adoptable = this.inner.adoptable;
    this.namespace = this.inner.namespace;
  }

  async start(spec: RunSpec): Promise<StartResult> {
    const result = await this.inner.start(spec);
    this.log.push({
      at: new Date(),
      action: 'start',
      sessionId: spec.sessionId,
      command: spec.command,
    });
    return result;
  }

  attach(ref: RunRef, options?: AttachOptions): Promise<RunExit> {
    return this.inner.attach(ref, options);
  }

  handleOf(sessionId: string): string | null {
    return this.inner.handleOf(sessionId);
  }

  observe(ref: RunRef): Promise<Observation> {
    return this.inner.observe(ref);
  }

  readOutput(ref: RunRef): Promise<RunOutput> {
    return this.inner.readOutput(ref);
  }

  async remove(ref: RunRef): Promise<void> {
    await this.inner.remove(ref);
    this.log.push({ at: new Date(), action: 'remove', sessionId: ref.sessionId });
  }

  listHandles(): Promise<RunRef[]> {
    return this.inner.listHandles();
  }

  repin(image: string): Promise<RepinResult[]> {
    return this.inner.repin(image);
  }

  ping(): Promise<PingResult> {
    return this.inner.ping();
  }

  /** Stops following output files (the local backend's own cleanup). */
  close(): void {
    this.inner.close();
  }
}
