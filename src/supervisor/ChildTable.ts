/**
 * A supervisor's children: one record per child spec, kept in start order
 * (OTP starts in order and stops in reverse). A Map iterates in insertion
 * order, and a record is inserted once (restarts reuse it), so the Map is the
 * order: removing a child (terminateChild, a temporary child's exit) is O(1).
 */
import type { AnyActorRef } from 'xstate';
import type { ResolvedChildSpec } from './childSpec.js';
import type { NestedSupervisor, Spawned } from './spawnChild.js';

export type ChildStatus = 'running' | 'restarting' | 'stopped';

/** What the supervisor knows of one child across its incarnations. */
export interface ChildRecord {
  spec: ResolvedChildSpec;
  input: unknown;
  spawned: Spawned | undefined;
  status: ChildStatus;
  starts: number;
  backoffAttempts: number;
  /** A pending delayed restart (backoff); shared by a restarting group. */
  timer: { id: unknown } | undefined;
}

/**
 * One row of `whichChildren()`; `type` tells what `ref` is, so a caller
 * narrows on it instead of probing the ref. `S` is the nested supervisor's
 * class (the Supervisor, which this table does not import).
 */
export type ChildInfo<S = NestedSupervisor> =
  | (ChildInfoFields & { type: 'worker'; ref: AnyActorRef | undefined })
  | (ChildInfoFields & { type: 'supervisor'; ref: S | undefined });

interface ChildInfoFields {
  id: string;
  restart: ResolvedChildSpec['restart'];
  status: ChildStatus;
  restartCount: number;
}

/** `countChildren()`, as OTP's count_children. */
export interface ChildCounts {
  specs: number;
  active: number;
  supervisors: number;
  workers: number;
}

export class ChildTable {
  private readonly byId = new Map<string, ChildRecord>();

  get size(): number {
    return this.byId.size;
  }

  get(id: string): ChildRecord | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  values(): IterableIterator<ChildRecord> {
    return this.byId.values();
  }

  add(spec: ResolvedChildSpec, input: unknown): ChildRecord {
    const child: ChildRecord = {
      spec,
      input,
      spawned: undefined,
      status: 'stopped',
      starts: 0,
      backoffAttempts: 0,
      timer: undefined,
    };
    this.byId.set(spec.id, child);
    return child;
  }

  remove(id: string): void {
    this.byId.delete(id);
  }

  /** Child ids in start order (a copy). */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Ids in reverse start order (a copy: stopping may remove some). */
  reversedIds(): string[] {
    return this.ids().reverse();
  }

  /** The rows, with each nested supervisor passed through `supervisor`. */
  whichChildren<S>(supervisor: (nested: NestedSupervisor) => S): ChildInfo<S>[] {
    return [...this.byId].map(([id, c]): ChildInfo<S> => {
      const fields = {
        id,
        restart: c.spec.restart,
        status: c.status,
        restartCount: Math.max(0, c.starts - 1),
      };
      const sp = c.spawned;
      if (c.spec.type === 'worker')
        return { ...fields, type: 'worker', ref: sp?.type === 'worker' ? sp.ref : undefined };
      return {
        ...fields,
        type: 'supervisor',
        ref: sp?.type === 'supervisor' ? supervisor(sp.ref) : undefined,
      };
    });
  }

  countChildren(): ChildCounts {
    let active = 0;
    let supervisors = 0;
    for (const c of this.byId.values()) {
      if (c.spawned) active += 1;
      if (c.spec.type === 'supervisor') supervisors += 1;
    }
    return { specs: this.byId.size, active, supervisors, workers: this.byId.size - supervisors };
  }
}
