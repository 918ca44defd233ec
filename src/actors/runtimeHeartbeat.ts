/**
 * Multi-node liveness. Every boot beats its `node_heartbeats` row every
 * `heartbeatMs` on the injected clock (a child of the root supervisor), and
 * the default `OwnerLiveness` reads those rows:
 *
 * - another boot of THIS node is gone at once: this boot replaced it (a
 *   deploy), however fresh its last beat;
 * - an owner whose node has booted again since is gone at once, likewise;
 * - any other owner is alive while its last beat is at most
 *   `heartbeatMs * staleBeats` old, i.e. until it has missed `staleBeats`
 *   beats in a row; an owner that never beat is gone.
 *
 * This boot itself is not asked here: the Reconciler calls its own running
 * sessions orphaned only when they have no live TaskRunner.
 */
import { assign, fromPromise, setup } from 'xstate';
import { beat, type Db, MAX_STALE_AFTER_MS, ownerBeat, pruneHeartbeats } from '../db/index.js';
import { afterStoreFailure } from './afterStoreFailure.js';
import type { OwnerLiveness } from './ownerLiveness.js';

export interface HeartbeatOptions {
  db: Db;
  owner: string;
  nodeId: string;
  heartbeatMs: number;
  staleBeats: number;
  now: () => number;
  /** Whether this boot holds its boot lock now (written with each beat; absent: never). */
  holdsBootLock?: () => boolean;
}

/** How long a beat vouches for its owner. */
export const staleAfterMs = (o: Pick<HeartbeatOptions, 'heartbeatMs' | 'staleBeats'>) =>
  o.heartbeatMs * o.staleBeats;

/**
 * Decides from the heartbeat rows; pure once the row is read.
 *
 * @example
 * ```ts
 * const o = { selfNode: 'a', heartbeatMs: 10, staleBeats: 3 };
 * isOwnerAlive('b@1', { beatAt: new Date(80), replaced: false }, 100, o) // => true
 * isOwnerAlive('b@1', { beatAt: new Date(69), replaced: false }, 100, o) // => false
 * isOwnerAlive('b@1', { beatAt: new Date(99), replaced: true }, 100, o) // => false
 * isOwnerAlive('a@0', { beatAt: new Date(99), replaced: false }, 100, o) // => false
 * isOwnerAlive('b@1', { beatAt: null, replaced: false }, 100, o) // => false
 * // The owner's own promise, when its row has one, wins over the reader's window:
 * isOwnerAlive('b@1', { beatAt: new Date(50), replaced: false, staleAfterMs: 60 }, 100, o) // => true
 * isOwnerAlive('b@1', { beatAt: new Date(90), replaced: false, staleAfterMs: 5 }, 100, o) // => false
 * ```
 */
export function isOwnerAlive(
  owner: string,
  row: { beatAt: Date | null; replaced: boolean; staleAfterMs?: number | null },
  now: number,
  o: { selfNode: string; heartbeatMs: number; staleBeats: number },
): boolean {
  if (owner.slice(0, owner.lastIndexOf('@')) === o.selfNode) return false;
  if (row.replaced || row.beatAt === null) return false;
  return now - row.beatAt.getTime() <= (row.staleAfterMs ?? staleAfterMs(o));
}

/** The default liveness: heartbeat rows, as the file comment says. */
export function heartbeatLiveness(o: HeartbeatOptions): OwnerLiveness {
  return {
    async isAlive(owner) {
      if (owner === o.owner) return true;
      const row = await ownerBeat(o.db, { owner });
      return isOwnerAlive(owner, row, o.now(), { ...o, selfNode: o.nodeId });
    },
  };
}

/** Writes this boot's row once, as of `at`: each of the child's beats, and the runtime's first. */
export function beatOnce(o: HeartbeatOptions, at: number = o.now()): Promise<void> {
  const window = staleAfterMs(o);
  return beat(o.db, {
    owner: o.owner,
    nodeId: o.nodeId,
    now: new Date(at),
    bootLock: o.holdsBootLock?.() ?? false,
    // Longer than a row may promise: say nothing, readers judge by theirs.
    ...(window <= MAX_STALE_AFTER_MS ? { staleAfterMs: window } : {}),
  });
}

/**
 * The beating child: beat, wait `heartbeatMs`, beat again. A beat that
 * fails is reported and the loop goes on (a database outage must not take
 * a permanent child down), unless the store was closed (afterStoreFailure):
 * then the child is reported once and beats no more, alive and quiet until
 * the runtime stops it (a final state would read to its supervisor as an
 * exit to restart from). A beat that hangs is abandoned after one period,
 * so beats never pile up. Every tenth beat also prunes rows of boots silent
 * for a hundred staleness windows. After each beat, `afterBeat` (the
 * runtime's sweep of runners another node fenced out, fencedOutSweep.ts).
 */
export function heartbeatLogic(
  o: HeartbeatOptions & {
    onError(error: unknown): void;
    /** Counts the beat as I/O in flight (the harness settles on it). */
    track<T>(work: Promise<T>): Promise<T>;
    /** After each beat that landed (a failure is reported apart, not as the beat's). */
    afterBeat?(): Promise<unknown>;
  },
) {
  return setup({
    types: { context: {} as { beats: number } },
    actors: {
      beat: fromPromise<void, { beats: number }>(({ input }) =>
        o.track(
          (async () => {
            const at = o.now();
            await beatOnce(o, at);
            await o.afterBeat?.().catch(o.onError);
            if (input.beats % 10 === 0) {
              await pruneHeartbeats(o.db, { before: new Date(at - 100 * staleAfterMs(o)) });
            }
          })(),
        ),
      ),
    },
    delays: { period: () => o.heartbeatMs },
    guards: {
      storeClosed: (_, params: { error: unknown }) => afterStoreFailure(params.error) === 'halt',
    },
  }).createMachine({
    id: 'heartbeat',
    context: { beats: 0 },
    initial: 'beating',
    states: {
      beating: {
        invoke: {
          src: 'beat',
          input: ({ context }) => ({ beats: context.beats }),
          onDone: 'resting',
          onError: [
            {
              guard: { type: 'storeClosed', params: ({ event }) => ({ error: event.error }) },
              target: 'storeClosed',
              actions: ({ event }) => o.onError(event.error),
            },
            { target: 'resting', actions: ({ event }) => o.onError(event.error) },
          ],
        },
        after: { period: { target: 'beating', reenter: true } },
        exit: assign({ beats: ({ context }) => context.beats + 1 }),
      },
      resting: { after: { period: 'beating' } },
      storeClosed: {},
    },
  });
}
