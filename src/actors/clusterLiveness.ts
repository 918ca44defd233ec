/**
 * Cluster liveness: this boot's own lock, and the other boots' deaths as
 * DOWN messages.
 *
 * On a Postgres server each boot holds its boot lock (src/db/bootLock.ts) on
 * a connection of its own. Every `pollMs` this watch reads the heartbeat rows
 * and the boot locks held (`pg_locks`) in one statement (`readLiveness`:
 * one autocommit per poll, where the two reads apart were two; a waiting
 * lock per peer would cost a connection per peer per node), and asks the
 * pure `livenessVerdict` about every other boot. An owner that
 * turns dead is reported once through `onDown`, which the runtime turns into
 * a Reconciler pass at once; the Reconciler lock makes one node act on it.
 *
 * A boot's lock counts as `released` only once this watch has seen it held,
 * or its row says it held it at its last beat (a boot that died before this
 * watch started, or before this watch's first look): a boot that never held
 * one (a node behind a pooler, with the lock off) is judged by its beats
 * alone, never killed for a lock it does not take.
 *
 * The same reading answers the Reconciler's and the runners' `isAlive`, so
 * both judge by one rule (adopt only the dead). Without a lock (PGlite: one
 * process, the node is alone) there is no watch and `isAlive` reads the
 * heartbeat rows, as before: the backstop alone. Behind a transaction pooler,
 * where no boot can hold a lock, `watchBeats` runs the watch on the rows
 * alone (every lock `unknown`): a beat gone stale, or a row gone, is the DOWN.
 */
import type { ClusterNodeView } from '../board/adminViews.js';
import {
  type BootLock,
  type BootLockState,
  bootLockKey,
  type Db,
  type DbHandle,
  type NodeBeat,
  readLiveness,
} from '../db/index.js';
import {
  type Blind,
  beatAgeOutside,
  type DeathReason,
  isReplacedBoot,
  type LivenessVerdict,
  livenessVerdict,
  nodeOf,
  type SelfLock,
} from '../machines/livenessPolicy.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { afterStoreFailure } from './afterStoreFailure.js';
import type { OwnerLiveness } from './ownerLiveness.js';

/** The boot-lock half of the store handle; `holdBootLock` null on PGlite. */
export interface BootLockPort {
  holdBootLock:
    | ((owner: string, onState: (state: BootLockState) => void) => Promise<BootLock>)
    | null;
  /** The Reconciler's leader lock (src/db/leaderLock.ts); absent or null: each pass takes the lock. */
  holdLeaderLock?: DbHandle['holdLeaderLock'];
  /** `transaction`: the handle is behind a transaction pooler (no session lock can be held). */
  pooler?: DbHandle['pooler'];
  /** Whether the lock's connection is a session of its own (the store handle's); run before the lock is taken. */
  probeSession?: DbHandle['probeSession'];
}

export interface ClusterLivenessOptions {
  db: Db;
  owner: string;
  nodeId: string;
  clock: SupervisorClock;
  pollMs: number;
  /**
   * The period of the next look, if not always `pollMs`: a node whose DOWNs
   * nobody acts on (a Reconciler follower) may look less often. On-demand
   * readings (`isAlive`, `nodes`) are as fresh as ever.
   */
  periodMs?(): number;
  staleAfterMs: number;
  bootLock?: BootLockPort | undefined;
  /** Without a lock to hold, watch the heartbeat rows anyway (a transaction pooler). */
  watchBeats?: boolean;
  /**
   * Another boot turned dead (once per boot). `atStart`: it was dead at
   * this watch's first look already, gone before this boot came up.
   */
  onDown(owner: string, reason: DeathReason, atStart: boolean): void;
  /** This boot's own lock changed state. */
  onSelf(state: SelfLock): void;
  onError(error: unknown): void;
  track<T>(work: Promise<T>): Promise<T>;
}

/**
 * After this boot sees the store again following an outage, how long another
 * boot's lock not seen held since is unknown rather than released: a live
 * node takes its lock again within its retry backoff (at most 1 s) and its
 * session check, even on a loaded machine.
 */
export const RESUME_GRACE_MS = 5_000;

/** Blind stretches kept for beat ages: far more than any window holds. */
const MAX_BLIND = 64;

/** One boot as the admin view lists it, before its sessions are counted (runtimeQueries.ts). */
export type ClusterNode = Omit<ClusterNodeView, 'sessionsOwned'>;

interface Reading {
  /** Its place in the order reads began (1, 2, ...). */
  seq: number;
  at: number;
  beats: Map<string, NodeBeat>;
  /** Null: no lock reading (no lock liveness). */
  held: Set<number> | null;
}

export class ClusterLiveness implements OwnerLiveness {
  private lock: BootLock | undefined;
  private selfState: SelfLock = 'none';
  private last: Reading | undefined;
  /** The read out now, if any, and its place in the order reads began. */
  private reading: { seq: number; done: Promise<Reading> } | undefined;
  /** How many reads have begun: a reading's `seq` says whether it began after a question. */
  private begun = 0;
  /** Each boot whose lock this watch has seen held, with the time of the last reading that saw it. */
  private readonly seenHeld = new Map<string, number>();
  private readonly downed = new Set<string>();
  /** Boots already dead at this watch's first reading: gone before this boot came up. */
  private readonly goneAtStart = new Set<string>();
  /** Every other boot this watch has seen a row of: a row that vanishes is a DOWN too. */
  private readonly known = new Set<string>();
  private timer: unknown = null;
  private stopped = false;
  /** The poll found the store closed: it never answers again (afterStoreFailure). */
  private pollHalted = false;
  /** Watching the rows with no lock of this boot's (`watchBeats`). */
  private beatsOnly = false;
  /**
   * The stretches in which this boot could not read the store (the newest
   * `MAX_BLIND` of them): nobody could beat then, so a beat's age leaves
   * them out (`beatAgeOutside`).
   */
  private readonly blind: Blind[] = [];
  /** When the last read succeeded; a failed read since opens a blind stretch from here. */
  private lastReadAt: number | null = null;
  /** A read failed and none succeeded since. */
  private readFailing = false;
  /**
   * When this boot's own lock came back after it was lost: the server may
   * have dropped every boot's lock at once (an outage of the store), so for
   * `RESUME_GRACE_MS` another boot's lock not seen held since counts as
   * unknown, not released. The first node back must not take the others,
   * alive and still reconnecting, for dead and take their runs. (A read
   * that failed alone says nothing about the others' locks.)
   */
  private relockedAt: number | null = null;

  constructor(private readonly o: ClusterLivenessOptions) {}

  /** The watch runs: this boot holds (or retakes) a boot lock, or watches the rows alone. */
  get watching(): boolean {
    return this.lock !== undefined || this.beatsOnly;
  }

  /**
   * Takes the boot lock (first attempt) and starts the watch; without a lock
   * port, the watch on the rows alone with `watchBeats`, else nothing.
   */
  async start(): Promise<void> {
    const hold = this.o.bootLock?.holdBootLock;
    if (hold === null || hold === undefined) {
      if (this.o.watchBeats !== true) return;
      this.beatsOnly = true;
    } else {
      this.lock = await hold(this.o.owner, (state) => this.setSelf(state));
      this.setSelf(this.lock.state());
    }
    // The boots alive now are seen holding their locks before this one
    // judges anyone: a death right after this boot started is a DOWN too.
    const first = await this.o.track(this.read()).catch(this.o.onError);
    if (first !== undefined)
      for (const owner of this.known)
        if (this.verdict(owner, first).owner === 'dead') this.goneAtStart.add(owner);
    this.arm();
  }

  /** This boot's own lock: `none` when lock liveness is off. */
  self(): SelfLock {
    return this.selfState;
  }

  /** May this boot take new grants? Not while it cannot prove it is alive. */
  canGrant(): boolean {
    return this.selfState === 'held' || this.selfState === 'none';
  }

  /**
   * Alive unless a reading begun after this question says dead. A reading
   * from before may predate the row that named `owner`: the CI saw a node,
   * asked about a peer that had booted and claimed runs a few milliseconds
   * after the last poll, judge it `no_beat` from a reading with no rows yet,
   * and adopt a live owner's run. A lock taken again since is the same case.
   * "Alive" from an older reading is safe (the run is left for a later
   * pass), so only a death costs a read, and deaths are rare.
   */
  async isAlive(owner: string): Promise<boolean> {
    if (owner === this.o.owner) return true;
    const asked = this.begun;
    const r = await this.fresh();
    if (this.verdict(owner, r).owner !== 'dead') return true;
    const after = r.seq > asked ? r : await this.readBegunAfter(asked);
    return this.verdict(owner, after).owner !== 'dead';
  }

  /** Every boot with a row, with what this node makes of it. */
  async nodes(): Promise<ClusterNode[]> {
    const r = await this.fresh();
    return [...r.beats.values()].map((b) => {
      const at = b.owner.lastIndexOf('@');
      return {
        owner: b.owner,
        nodeId: b.nodeId,
        bootId: b.owner.slice(at + 1),
        since: b.startedAt.toISOString(),
        lastBeat: b.beatAt.toISOString(),
        lock: this.lockOf(b.owner, r),
        liveness: b.owner === this.o.owner ? 'alive' : this.verdict(b.owner, r).owner,
        deadAfterMs: this.windowOf(b),
        self: b.owner === this.o.owner,
      };
    });
  }

  /** Gives the lock back (a clean stop): the others see this boot gone at once. */
  async stop(): Promise<void> {
    this.halt();
    await this.lock?.release();
  }

  /** Drops the lock's socket as a dying process would. */
  kill(): void {
    this.halt();
    this.lock?.drop();
  }

  private halt(): void {
    this.stopped = true;
    if (this.timer !== null) this.o.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private setSelf(state: BootLockState): void {
    if (this.stopped || state === this.selfState) return;
    if (state === 'held' && (this.selfState === 'lost' || this.selfState === 'busy')) {
      // The server may have dropped every boot's lock with this one's (an
      // outage of the store): the others take theirs again within the grace.
      this.relockedAt = this.o.clock.now();
    }
    this.selfState = state;
    this.o.onSelf(state);
  }

  private lockOf(owner: string, r: Reading): 'held' | 'released' | 'unknown' {
    if (r.held === null) return 'unknown';
    if (r.held.has(bootLockKey(owner))) return 'held';
    const seen = this.seenHeld.get(owner);
    const resumed = this.relockedAt;
    if (
      resumed !== null &&
      r.at - resumed < RESUME_GRACE_MS &&
      !(seen !== undefined && seen >= resumed)
    )
      return 'unknown';
    return seen !== undefined || r.beats.get(owner)?.bootLock === true ? 'released' : 'unknown';
  }

  /**
   * The window a boot is judged by: its own, when its row says it (a node
   * that beats less often than this one is not dead for it), else this
   * node's (a row from before migration 19, or no row).
   */
  private windowOf(b: NodeBeat | undefined): number {
    return b?.staleAfterMs ?? this.o.staleAfterMs;
  }

  private verdict(owner: string, r: Reading): LivenessVerdict {
    const b = r.beats.get(owner);
    const mine = r.beats.get(this.o.owner);
    return livenessVerdict({
      sameNode: isReplacedBoot({
        ownerNode: nodeOf(owner),
        nodeId: this.o.nodeId,
        ownerStartedAt: b?.startedAt.getTime() ?? null,
        selfStartedAt: mine?.startedAt.getTime() ?? null,
      }),
      beatAgeMs: b === undefined ? null : beatAgeOutside(b.beatAt.getTime(), r.at, this.blind),
      replaced: b?.replaced ?? false,
      lock: this.lockOf(owner, r),
      staleAfterMs: this.windowOf(b),
      self: this.selfState,
    });
  }

  /** A reading at most half a period old (one read at a time). */
  private fresh(): Promise<Reading> {
    const last = this.last;
    if (last !== undefined && this.o.clock.now() - last.at <= this.o.pollMs / 2)
      return Promise.resolve(last);
    return this.reading?.done ?? this.begin();
  }

  /** A reading begun after `seq` reads had: the last one, the one out, or a new one. */
  private readBegunAfter(seq: number): Promise<Reading> {
    if (this.last !== undefined && this.last.seq > seq) return Promise.resolve(this.last);
    if (this.reading !== undefined && this.reading.seq > seq) return this.reading.done;
    return this.begin();
  }

  /** Starts a read that later questions may share. */
  private begin(): Promise<Reading> {
    const done = this.read();
    const seq = this.begun;
    const out = { seq, done };
    this.reading = out;
    void done.then(
      () => this.settled(out),
      () => this.settled(out),
    );
    return done;
  }

  private settled(out: { seq: number }): void {
    if (this.reading === out) this.reading = undefined;
  }

  /**
   * One statement: the rows and, with a lock, the held keys. A failure
   * rejects the read whole (nothing is judged on it, `last` stays): the poll
   * and `start` report it through `onError`, and `isAlive` and `nodes`
   * reject, so the Reconciler's pass or the runner's adopt check fails
   * rather than taking an owner for dead.
   */
  private async read(): Promise<Reading> {
    this.begun += 1;
    const seq = this.begun;
    let reading: Awaited<ReturnType<typeof readLiveness>>;
    try {
      reading = await readLiveness(this.o.db, { locks: this.lock !== undefined });
    } catch (error) {
      this.readFailing = true;
      throw error;
    }
    const at = this.o.clock.now();
    if (this.readFailing) {
      // Blind from the last read that saw the store (it may have gone just after).
      this.readFailing = false;
      if (this.lastReadAt !== null) {
        this.blind.push({ from: this.lastReadAt, to: at });
        if (this.blind.length > MAX_BLIND) this.blind.shift();
      }
    }
    this.lastReadAt = at;
    const beats = new Map(reading.beats.map((b) => [b.owner, b]));
    const { held } = reading;
    const r: Reading = { seq, at, beats, held };
    for (const owner of beats.keys()) if (owner !== this.o.owner) this.known.add(owner);
    if (held !== null)
      for (const owner of beats.keys())
        if (held.has(bootLockKey(owner))) this.seenHeld.set(owner, r.at);
    // Reads can overlap (a question's own read beside the poll's): the later begun one stands.
    if (this.last === undefined || this.last.seq < seq) this.last = r;
    return r;
  }

  private arm(): void {
    if (this.stopped || this.pollHalted) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = null;
      void this.o
        .track(this.read())
        .then(
          (r) => this.look(r),
          (error: unknown) => {
            this.o.onError(error);
            if (afterStoreFailure(error) === 'halt') this.pollHalted = true;
          },
        )
        .finally(() => this.arm());
    }, this.o.periodMs?.() ?? this.o.pollMs);
  }

  /** Reports every boot that turned dead since the last look, once. */
  private look(r: Reading): void {
    if (this.stopped) return;
    // A row that vanished counts too: its boot stopped on purpose (or was pruned).
    for (const owner of this.known) {
      const v = this.verdict(owner, r);
      // Back (its lock taken again): a later death is a new DOWN.
      if (v.owner === 'alive') {
        this.downed.delete(owner);
        this.goneAtStart.delete(owner);
      }
      if (v.owner !== 'dead' || this.downed.has(owner)) continue;
      this.downed.add(owner);
      // A pruned row is forgotten once reported.
      if (!r.beats.has(owner)) this.known.delete(owner);
      this.o.onDown(owner, v.reason, this.goneAtStart.has(owner));
    }
  }
}
