/**
 * How a runtime's tree ends (src/actors/runtime.ts): `stop()` (graceful, in
 * an order other nodes rely on), `kill()` (abrupt, what a deploy does) and
 * `exited`, which says why once the root is down. What the root said before
 * it exited is classified by the pure src/actors/runtimeExit.ts.
 */

import type { SupervisorEvent } from '../supervisor/events.js';
import type { ExitReason } from '../supervisor/exitReason.js';
import {
  classifyExit,
  NO_CRASHES,
  noteRootEvent,
  type RuntimeEnding,
  type RuntimeExit,
} from './runtimeExit.js';

/** The root supervisor as the ending uses it. */
export interface EndingRoot {
  readonly id: string;
  subscribe(listener: (event: SupervisorEvent) => void): () => void;
  onExit(listener: (reason: ExitReason) => void): () => void;
  shutdown(): Promise<void>;
  kill(): void;
}

export interface TreeEndOptions {
  root: EndingRoot;
  /** Marks the runtime dead and stops its I/O shell (no row is shown, no tick sent after). */
  shutDownShell(): void;
  /** Deletes this boot's heartbeat row. */
  endBeat(): Promise<void>;
  /** This node's Reconciler leadership, if it has a leader lock. */
  leader: { release(): Promise<void>; drop(): void } | undefined;
  /** The boot lock's liveness, once its first attempt is over. */
  cluster(): { stop(): Promise<void>; kill(): void } | undefined;
  /** The tree ended, for whatever reason (`booted` rejects if it had not settled). */
  onEnded(exit: RuntimeExit): void;
  /** Where a failed step of `stop()` goes: the runtime is dead by then, so not its `report`. */
  onError(error: unknown): void;
}

/**
 * Watches the root from construction: build it right after the root
 * started, before anything else subscribes to the tree.
 */
export class TreeEnd {
  /** Resolves once, when the root is down, saying why. */
  readonly exited: Promise<RuntimeExit>;
  /** Set by `stop()` / `kill()` before the root goes down: any other exit is the root giving up. */
  private why: RuntimeEnding | undefined;
  private stopping: Promise<void> | undefined;

  constructor(private readonly o: TreeEndOptions) {
    let resolveExited: (exit: RuntimeExit) => void = () => {};
    this.exited = new Promise<RuntimeExit>((resolve) => {
      resolveExited = resolve;
    });
    // The root gives up when its children crash faster than its intensity:
    // it stops them all and exits, and nothing above restarts it. Tell it.
    let crashes = NO_CRASHES;
    o.root.subscribe((event) => {
      crashes = noteRootEvent(crashes, event, o.root.id);
    });
    o.root.onExit((reason) => {
      const exit = classifyExit(this.why, reason, crashes);
      if (exit.kind === 'gave_up') o.shutDownShell();
      o.onEnded(exit);
      resolveExited(exit);
    });
  }

  /** Who asked for the end, if anyone has yet. */
  ending(): RuntimeEnding | undefined {
    return this.why;
  }

  /**
   * The tree in reverse start order, then the shell, then this boot's
   * heartbeat row, the leader lock and the boot lock. Idempotent.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      const o = this.o;
      this.why ??= 'stop';
      await o.root.shutdown();
      o.shutDownShell();
      // Stopped on purpose: other nodes need not wait out the staleness
      // window to adopt the runs this boot leaves behind.
      // A store that is down by now only costs them the window: reported.
      await o.endBeat().catch(o.onError);
      // The leader lock first: a follower leads at once.
      await o.leader?.release().catch(o.onError);
      await o.cluster()?.stop().catch(o.onError);
    })();
    return this.stopping;
  }

  /** Everything at once, with no cleanup, as a replaced app container would die. */
  kill(): void {
    this.why ??= 'kill';
    this.o.leader?.drop();
    this.o.cluster()?.kill();
    this.o.shutDownShell();
    this.o.root.kill();
  }
}
