/**
 * An in-memory implementation of the board port (source and commands) for the
 * UI server's tests, the browser test and the benchmark. It keeps a global
 * line with a global cap and per-user caps: the first card in line whose user
 * is under their cap gets the next free runner. Every change emits the changed
 * card synchronously, like the runtime; positions come from its line (the
 * port's `line`: each queued session's key is its place in arrival order),
 * or, with `lineKeys: false`, every card whose position moved is emitted too
 * (a source without a line, as the runtime was before).
 */
import type {
  ActivityQuery,
  ActivitySeries,
  BoardCard,
  BoardCommands,
  BoardLine,
  BoardMetricsSnapshot,
  BoardSource,
  BootLockView,
  ClusterNodeView,
  CreateTaskInput,
  PoolSnapshot,
  StoredOutput,
  SubscribeOptions,
  TaskDetail,
} from '../../src/board/boardPort.js';
import {
  BoardCommandError,
  BoardStoppedError,
  CARD_OUTPUT_LINES,
} from '../../src/board/boardPort.js';

export interface FakeBoardOptions {
  maxRunning?: number;
  /** Per-user cap when no override is set; `null` = only the global cap. */
  defaultUserCap?: number | null;
  /** Milliseconds since the epoch; tests pass a manual clock. */
  now?: () => number;
  /** Offer the line (default); false: emit every moved card instead. */
  lineKeys?: boolean;
}

export class FakeBoard implements BoardSource, BoardCommands {
  readonly maxRunning: number;
  readonly defaultUserCap: number | null;
  private readonly now: () => number;
  private readonly cardsById = new Map<string, BoardCard>();
  /** Task ids in line, in the order of their sessions' keys (arrival). */
  private readonly queue: string[] = [];
  /** Each queued session's key: its arrival number. */
  private readonly turnOf = new Map<string, number>();
  private nextTurn = 0;
  private readonly lineListeners = new Set<() => void>();
  readonly line: BoardLine | undefined;
  private readonly caps = new Map<string, number | null>();
  private readonly listeners = new Set<(card: BoardCard) => void>();
  private readonly removalListeners = new Set<(taskIds: readonly string[]) => void>();
  /** What each task runs, and each session's latest card and every output line (job pages). */
  private readonly inputs = new Map<string, CreateTaskInput>();
  private readonly attempts = new Map<string, Map<string, BoardCard>>();
  private readonly fullOutput = new Map<string, string[]>();
  private waitSamples: number[] = [];
  private nextId = 1;
  restartsTotal = 0;
  giveUpsTotal: Record<string, number> = {};
  /** The dispatch side of /metrics, as a test sets it (ticks are handed out once, as samples). */
  tickSamples: Array<{ seconds: number; ops: number }> = [];
  ticksTotal = { ok: 0, failed: 0 };
  grantsTotal = 0;
  ownerDownsTotal: Record<string, number> = {};
  /** createTask's answers by outcome, as the runtime counts them. */
  submissionsTotal: Record<string, number> = {};
  private countSubmission(outcome: 'queued' | 'replayed' | 'conflict'): void {
    this.submissionsTotal[outcome] = (this.submissionsTotal[outcome] ?? 0) + 1;
  }
  samplesDroppedTotal: Record<string, number> = {};
  /** Every command call, for assertions. */
  readonly calls: Array<{ op: string; actor: string | null; args: unknown[] }> = [];

  constructor(options: FakeBoardOptions = {}) {
    this.maxRunning = options.maxRunning ?? 2;
    this.defaultUserCap = options.defaultUserCap ?? null;
    this.now = options.now ?? (() => Date.now());
    this.line =
      options.lineKeys === false
        ? undefined
        : {
            keyOf: (card) => {
              const turn = this.turnOf.get(card.sessionId);
              return turn === undefined ? null : { turn, joinSeq: 0 };
            },
            positionOf: (card) => this.placeOf(card.taskId, card.sessionId),
            subscribe: (listener) => {
              this.lineListeners.add(listener);
              return () => this.lineListeners.delete(listener);
            },
          };
  }

  // --- BoardSource ---
  cards(userId: string | null): BoardCard[] {
    const places = new Map(this.queue.map((id, i) => [id, i + 1]));
    return [...this.cardsById.values()]
      .filter((c) => userId === null || c.userId === userId)
      .map((c) => this.live(c, places.get(c.taskId)));
  }

  subscribe(listener: (card: BoardCard) => void, options?: SubscribeOptions): () => void {
    this.listeners.add(listener);
    const onRemoved = options?.onRemoved;
    if (onRemoved !== undefined) this.removalListeners.add(onRemoved);
    const release = options?.passive === true ? () => {} : this.watch();
    return () => {
      this.listeners.delete(listener);
      if (onRemoved !== undefined) this.removalListeners.delete(onRemoved);
      release();
    };
  }

  /** Watches held now (BoardSource.watch: a non-passive subscriber holds one too). */
  watchers = 0;

  watch(): () => void {
    this.watchers += 1;
    let released = false;
    return () => {
      if (!released) this.watchers -= 1;
      released = true;
    };
  }

  // --- BoardCommands ---
  async createTask(userId: string, input: CreateTaskInput) {
    this.calls.push({ op: 'createTask', actor: userId, args: [input] });
    if (input.image === 'invalid') throw new BoardCommandError('invalid', 'image refused');
    // A node whose stop() has begun (the runtime's RuntimeStoppedError is one).
    if (input.image === 'stopping')
      throw new BoardStoppedError('the runtime is stopped: enqueue was not applied');
    // A key names one task of its user, as the tick keeps it (rtTickAppend.ts).
    const keyed = input.key === undefined ? undefined : this.keys.get(`${userId}\n${input.key}`);
    if (keyed !== undefined) {
      this.countSubmission(keyed.title === input.title ? 'replayed' : 'conflict');
      if (keyed.title !== input.title)
        throw new BoardCommandError(
          'conflict',
          `key ${input.key} was submitted with another title`,
        );
      const card = this.get(keyed.taskId);
      return {
        taskId: card.taskId,
        sessionId: card.sessionId,
        position: card.queued?.position ?? 0,
        replayed: true,
      };
    }
    const card = this.enqueue(userId, input);
    this.countSubmission('queued');
    if (input.key !== undefined)
      this.keys.set(`${userId}\n${input.key}`, { taskId: card.taskId, title: input.title });
    this.settle([card.taskId]);
    const after = this.get(card.taskId);
    return {
      taskId: card.taskId,
      sessionId: card.sessionId,
      position: after.queued?.position ?? 0,
      replayed: false,
    };
  }

  /** Submission keys by user and key: the task each named, and its title. */
  private readonly keys = new Map<string, { taskId: string; title: string }>();

  /**
   * Many tasks of one user at once with one settle (a long line for the
   * paging and first-paint tests: createTask settles the whole line each time).
   */
  createMany(userId: string, inputs: readonly CreateTaskInput[]): string[] {
    const ids = inputs.map((input) => this.enqueue(userId, input).taskId);
    this.settle(ids);
    return ids;
  }

  /** A new task's card at the back of the line, not yet settled. */
  private enqueue(userId: string, input: CreateTaskInput): BoardCard {
    const n = this.nextId++;
    const card: BoardCard = {
      taskId: `t${n}`,
      userId,
      title: input.title,
      column: 'queued',
      sessionId: `s${n}`,
      attempt: 1,
      status: 'queued',
      queued: { position: 0, since: this.iso() },
      running: null,
      failure: null,
      exitCode: null,
      lastOutput: [],
      updatedAt: this.iso(),
      timeLimitMs: input.timeLimitMs ?? null,
    };
    this.cardsById.set(card.taskId, card);
    this.inputs.set(card.taskId, input);
    this.join(card);
    return card;
  }

  async cancel(actor: string | null, taskId: string): Promise<void> {
    this.calls.push({ op: 'cancel', actor, args: [taskId] });
    const card = this.visible(actor, taskId);
    if (card.column === 'done' || card.column === 'failed') {
      throw new BoardCommandError('conflict', `task ${taskId} already finished`);
    }
    this.update(taskId, {
      column: 'failed',
      status: 'cancelled',
      queued: null,
      running: null,
    });
  }

  async retry(actor: string | null, taskId: string) {
    this.calls.push({ op: 'retry', actor, args: [taskId] });
    const card = this.visible(actor, taskId);
    if (card.status !== 'failed' && card.status !== 'cancelled') {
      throw new BoardCommandError('conflict', `task ${taskId} is ${card.status}`);
    }
    const sessionId = `s${this.nextId++}`;
    this.cardsById.set(taskId, {
      ...card,
      sessionId,
      attempt: card.attempt + 1,
      column: 'queued',
      status: 'queued',
      queued: { position: 0, since: this.iso() },
      running: null,
      failure: null,
      exitCode: null,
      lastOutput: [],
      updatedAt: this.iso(),
    });
    this.join(this.cardsById.get(taskId)!);
    this.settle([taskId]);
    return { sessionId, position: this.get(taskId).queued?.position ?? 0 };
  }

  async setUserCap(userId: string, maxRunning: number | null): Promise<void> {
    this.calls.push({ op: 'setUserCap', actor: null, args: [userId, maxRunning] });
    this.caps.set(userId, maxRunning);
    this.settle([]);
  }

  poolSnapshot(): PoolSnapshot {
    const users = new Map<string, { running: number; queued: number }>();
    for (const c of this.cardsById.values()) {
      const u = users.get(c.userId) ?? { running: 0, queued: 0 };
      if (c.running) u.running += 1;
      if (c.queued) u.queued += 1;
      users.set(c.userId, u);
    }
    return {
      maxRunning: this.maxRunning,
      running: this.runningCount(),
      queued: this.queue.length,
      users: [...users].map(([userId, u]) => ({ userId, ...u, maxRunning: this.capOf(userId) })),
    };
  }

  /** The engine as a test sets it (`/healthz` reports it). */
  engine: 'available' | 'unavailable' = 'available';
  /** This boot's lock as a test sets it (`/healthz` reports it when set). */
  lock: BootLockView | undefined;
  /** This node's part in the Reconciler's leadership as a test sets it. */
  reconciler: 'leader' | 'follower' | 'lost' | 'none' | undefined;
  /** How other nodes' ticks reach this node, as a test sets it. */
  notifications: 'listening' | 'polling' | undefined;
  /** The cluster view as a test sets it (GET /api/admin/nodes). */
  nodes: ClusterNodeView[] = [];
  async clusterNodes(): Promise<ClusterNodeView[]> {
    return this.nodes;
  }
  /**
   * The dashboard's series as a test sets it (GET /api/admin/activity; the
   * store's SQL has its own test); every query asked is kept.
   */
  activitySeries: ActivitySeries = {
    bucketSeconds: 60,
    t: [],
    queued: [],
    running: [],
    waitP50: [],
    waitP95: [],
    succeeded: [],
    failed: [],
  };
  readonly activityQueries: ActivityQuery[] = [];
  async activity(query: ActivityQuery): Promise<ActivitySeries> {
    this.activityQueries.push(query);
    return this.activitySeries;
  }
  health(): {
    engine: 'available' | 'unavailable';
    lock?: BootLockView;
    reconciler?: 'leader' | 'follower' | 'lost' | 'none';
    notifications?: 'listening' | 'polling';
  } {
    return {
      engine: this.engine,
      ...(this.lock ? { lock: this.lock } : {}),
      ...(this.reconciler ? { reconciler: this.reconciler } : {}),
      ...(this.notifications ? { notifications: this.notifications } : {}),
    };
  }

  metrics(): BoardMetricsSnapshot {
    const pool = this.poolSnapshot();
    const samples = this.waitSamples;
    this.waitSamples = [];
    return {
      queueDepth: pool.users.map((u) => ({ userId: u.userId, queued: u.queued })),
      running: pool.users.map((u) => ({ userId: u.userId, running: u.running })),
      waitSamplesSeconds: samples,
      restartsTotal: this.restartsTotal,
      giveUpsTotal: { ...this.giveUpsTotal },
      tickSamples: this.tickSamples.splice(0),
      ticksTotal: { ...this.ticksTotal },
      grantsTotal: this.grantsTotal,
      ownerDownsTotal: { ...this.ownerDownsTotal },
      submissionsTotal: { ...this.submissionsTotal },
      samplesDroppedTotal: { ...this.samplesDroppedTotal },
    };
  }

  async taskDetail(actor: string | null, taskId: string): Promise<TaskDetail | null> {
    const card = this.cardsById.get(taskId);
    const input = this.inputs.get(taskId);
    if (card === undefined || input === undefined) return null;
    if (actor !== null && card.userId !== actor) return null;
    const attempts = [...(this.attempts.get(taskId)?.values() ?? [])].map((c) => ({
      sessionId: c.sessionId,
      attempt: c.attempt,
      status: c.status,
      position: c.queued?.position ?? (c.status === 'running' ? 0 : null),
      enqueuedAt: c.queued?.since ?? c.updatedAt,
      claimedAt: c.running?.since ?? null,
      startedAt: c.running?.since ?? null,
      finishedAt: c.column === 'done' || c.column === 'failed' ? c.updatedAt : null,
      exitCode: c.exitCode,
      failureReason: c.failure?.reason ?? (c.status === 'cancelled' ? 'cancelled' : null),
      node: c.column === 'queued' ? null : 'fake-node@boot',
      backend: c.column === 'queued' ? null : 'simulated',
      handle: c.column === 'queued' ? null : `handle-${c.sessionId}`,
      events: [],
    }));
    return {
      taskId,
      userId: card.userId,
      title: card.title,
      image: input.image,
      command: [...input.command],
      envKeys: Object.keys(input.env ?? {}).sort(),
      createdAt: attempts[0]?.enqueuedAt ?? card.updatedAt,
      ...(input.key === undefined ? {} : { submitKey: input.key }),
      ...(input.timeLimitMs === undefined ? {} : { timeLimitMs: input.timeLimitMs }),
      attempts,
    };
  }

  async taskOutput(
    actor: string | null,
    taskId: string,
    sessionId: string,
  ): Promise<StoredOutput | null> {
    const card = this.attempts.get(taskId)?.get(sessionId);
    if (card === undefined || (actor !== null && card.userId !== actor)) return null;
    // Like the runtime: output is stored when the run finishes.
    if (card.column !== 'done' && card.column !== 'failed') return null;
    const text = (this.fullOutput.get(sessionId) ?? []).map((l) => `${l}\n`).join('');
    return { text, totalBytes: Buffer.byteLength(text), truncated: false };
  }

  // --- test controls: what the runtime would report ---
  /** Appends an output line to a running card. */
  /** Finished cards leave the board, as the runtime's retention takes them off (SubscribeOptions.onRemoved). */
  forget(taskIds: readonly string[]): void {
    for (const id of taskIds) {
      if (this.get(id).column !== 'done' && this.get(id).column !== 'failed')
        throw new Error(`${id} has not finished`);
      this.cardsById.delete(id);
    }
    for (const listener of this.removalListeners) listener(taskIds);
  }

  output(taskId: string, line: string): void {
    const card = this.get(taskId);
    const all = this.fullOutput.get(card.sessionId) ?? [];
    all.push(line);
    this.fullOutput.set(card.sessionId, all);
    const lastOutput = [...card.lastOutput, line].slice(-CARD_OUTPUT_LINES);
    this.update(taskId, { lastOutput });
  }

  /** Finishes a running card: exit 0 succeeds, anything else fails (recoverable). */
  finish(taskId: string, exitCode: number): void {
    const ok = exitCode === 0;
    this.update(taskId, {
      column: ok ? 'done' : 'failed',
      status: ok ? 'succeeded' : 'failed',
      running: null,
      exitCode,
      failure: ok ? null : { reason: 'exit_code', recoverable: true },
    });
  }

  /** Fails a card for a runtime reason (e.g. `container_replaced`). */
  fail(taskId: string, reason: string, recoverable: boolean): void {
    this.giveUpsTotal[reason] = (this.giveUpsTotal[reason] ?? 0) + 1;
    this.update(taskId, {
      column: 'failed',
      status: 'failed',
      queued: null,
      running: null,
      failure: { reason, recoverable },
    });
  }

  get(taskId: string): BoardCard {
    const card = this.cardsById.get(taskId);
    if (card === undefined) throw new Error(`fake board: no task ${taskId}`);
    return this.live(card, this.placeOf(taskId, card.sessionId) ?? undefined);
  }

  // --- internals ---
  private iso(): string {
    return new Date(this.now()).toISOString();
  }

  private visible(actor: string | null, taskId: string): BoardCard {
    const card = this.cardsById.get(taskId);
    if (card === undefined || (actor !== null && card.userId !== actor)) {
      throw new BoardCommandError('not_found', `no task ${taskId}`);
    }
    return card;
  }

  private capOf(userId: string): number | null {
    return this.caps.has(userId) ? this.caps.get(userId)! : this.defaultUserCap;
  }

  private runningCount(userId?: string): number {
    let n = 0;
    for (const c of this.cardsById.values()) {
      if (c.running && (userId === undefined || c.userId === userId)) n += 1;
    }
    return n;
  }

  private update(taskId: string, patch: Partial<BoardCard>): void {
    const card = this.get(taskId);
    this.cardsById.set(taskId, { ...card, ...patch, updatedAt: this.iso() });
    if (patch.queued === null) this.removeFromLine(taskId);
    this.settle([taskId]);
  }

  private join(card: BoardCard): void {
    this.turnOf.set(card.sessionId, this.nextTurn++);
    this.queue.push(card.taskId);
  }

  private removeFromLine(taskId: string): void {
    const card = this.cardsById.get(taskId);
    const place = card === undefined ? null : this.placeOf(taskId, card.sessionId);
    if (place !== null) this.queue.splice(place - 1, 1);
    if (card !== undefined) this.turnOf.delete(card.sessionId);
  }

  /** 1-based place of the task's session in line (a binary search by key), or null. */
  private placeOf(taskId: string, sessionId: string): number | null {
    const turn = this.turnOf.get(sessionId);
    if (turn === undefined) return null;
    let lo = 0;
    let hi = this.queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const id = this.queue[mid]!;
      if (this.turnOf.get(this.cardsById.get(id)!.sessionId)! < turn) lo = mid + 1;
      else hi = mid;
    }
    return this.queue[lo] === taskId ? lo + 1 : null;
  }

  /** The card with its position now (the line's), when it waits. */
  private live(card: BoardCard, place: number | undefined): BoardCard {
    if (card.queued === null || this.line === undefined || place === undefined) return card;
    return card.queued.position === place
      ? card
      : { ...card, queued: { ...card.queued, position: place } };
  }

  /**
   * Grants free runners, emits every changed card (with `lineKeys: false`,
   * every renumbered one too), then tells the line's listeners.
   */
  private settle(touched: string[]): void {
    const changed = new Set(touched);
    for (let i = 0; i < this.queue.length && this.runningCount() < this.maxRunning; ) {
      const id = this.queue[i]!;
      const card = this.cardsById.get(id)!;
      const cap = this.capOf(card.userId);
      if (cap !== null && this.runningCount(card.userId) >= cap) {
        i += 1;
        continue;
      }
      this.queue.splice(i, 1);
      this.turnOf.delete(card.sessionId);
      const since = this.iso();
      this.waitSamples.push((this.now() - Date.parse(card.queued?.since ?? since)) / 1000);
      this.cardsById.set(id, {
        ...card,
        column: 'running',
        status: 'running',
        queued: null,
        running: {
          since,
          until:
            card.timeLimitMs == null
              ? null
              : new Date(Date.parse(since) + card.timeLimitMs).toISOString(),
        },
        updatedAt: since,
      });
      changed.add(id);
    }
    if (this.line === undefined)
      this.queue.forEach((id, i) => {
        const card = this.cardsById.get(id)!;
        if (card.queued && card.queued.position !== i + 1) {
          this.cardsById.set(id, { ...card, queued: { ...card.queued, position: i + 1 } });
          changed.add(id);
        }
      });
    for (const id of changed) {
      const card = this.get(id);
      const sessions = this.attempts.get(id) ?? new Map<string, BoardCard>();
      this.attempts.set(id, sessions.set(card.sessionId, card));
      for (const listener of this.listeners) listener(card);
    }
    for (const listener of this.lineListeners) listener();
  }
}
