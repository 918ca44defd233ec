/**
 * Names for actors that outlive any one incarnation. A supervisor registers a
 * child's `name` on every (re)start; the name is freed when its holder exits,
 * so sending to a name always reaches the current incarnation, or fails.
 */
import type { EventObject } from 'xstate';
import { AlreadyStartedError, NoProcError } from './errors.js';
import { isAlive, type Watchable, watchExit } from './watchExit.js';

interface Entry {
  ref: Watchable;
  unwatch: () => void;
}

export class Registry {
  private readonly names = new Map<string, Entry>();

  /**
   * Binds `name` to `ref`. A name held by a live actor is taken: throws
   * `AlreadyStartedError`. A name still bound to a dead holder is simply
   * rebound (a restart can run before the old holder's exit is observed).
   */
  register(name: string, ref: Watchable): void {
    const held = this.names.get(name);
    if (held && held.ref !== ref && isAlive(held.ref)) throw new AlreadyStartedError(name);
    held?.unwatch();
    const unwatch = watchExit(ref, () => {
      if (this.names.get(name)?.ref === ref) this.names.delete(name);
    });
    if (!unwatch) throw new NoProcError(name);
    this.names.set(name, { ref, unwatch });
  }

  unregister(name: string): void {
    this.names.get(name)?.unwatch();
    this.names.delete(name);
  }

  /** The live holder of `name`, if any. */
  whereis(name: string): Watchable | undefined {
    const held = this.names.get(name);
    if (!held || !isAlive(held.ref)) return undefined;
    return held.ref;
  }

  /** Sends to the current holder; throws `NoProcError` when nobody holds the name. */
  send(name: string, event: EventObject): void {
    const ref = this.whereis(name);
    if (!ref || !('send' in ref)) throw new NoProcError(name);
    ref.send(event);
  }

  /** The registered names, sorted. */
  registered(): string[] {
    return [...this.names.keys()].filter((n) => this.whereis(n) !== undefined).sort();
  }
}
