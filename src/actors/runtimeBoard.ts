/**
 * The board's in-memory index: one card per task (the task and its latest
 * session), loaded from the rows at boot and refreshed, task by task, after
 * every change this node's ticks return and every change of other nodes'
 * ticks the feed reads (src/actors/runtimeFeed.ts). `cards()` must be
 * synchronous (the server stamps a sequence number on a snapshot), hence
 * the cache.
 *
 * Positions are the database's order, the one grants really follow over
 * every node (DESIGN.md rule 4: the board must not promise a place the
 * dispatcher will not honour), computed from the card's turn key and the
 * users' lines (src/actors/lineBook.ts). The board offers them as its
 * `line` (BoardSource.line): a card keeps its key while it waits, so when
 * the lines change (one grant moves every card behind it) the board emits
 * no card; it tells the line's listeners, at most every `pushEveryMs`, and
 * they ask the positions of the cards they show. Only a queued card with no
 * key (a row not yet placed by a tick) is renumbered and emitted by the
 * board itself. `cards()` reads positions live, so a snapshot is never
 * behind the lines.
 */
import { sql } from 'kysely';
import type { BoardLine } from '../board/boardPort.js';
import type { Db, Session, Task } from '../db/index.js';
import { toSession, toTask } from '../db/rows.js';
import { capLine, endOutput, pushOutput } from '../machines/outputTail.js';
import type { RuntimeCard, RuntimeColumn } from './runtimeTypes.js';

/** Most output lines a card carries, and the longest line before it is cut. */
export const CARD_OUTPUT_LINES = 20;
export const CARD_LINE_CHARS = 500;
const CARD_OUTPUT = { lines: CARD_OUTPUT_LINES, chars: CARD_LINE_CHARS };

/** Where the board reads positions: the node's copy of the users' lines. */
export interface BoardPositions {
  /** 0: holds a slot; n: place in line; null: unknown (no turn key). */
  placeOf(session: Session): number | null;
  /** Told after the lines changed (not re-entrantly safe: schedule). */
  subscribe(listener: () => void): () => void;
}

interface Entry {
  task: Task;
  session: Session;
  lines: readonly string[];
  /** An unfinished last line's head (machines/outputTail.ts); '' once the run ended. */
  partial: string;
  /** The position last emitted for a queued card. */
  position: number | null;
  /** The stored output was looked for already (a finished card after a restart). */
  restored: boolean;
  /** Why the task's previous attempt ended, when this is a later attempt. */
  previous: { attempt: number; reason: string } | null;
}

export interface ApplyOptions {
  /**
   * The run's whole output already went through `appendOutput` (this boot
   * ran it and finished it): a finished card need not read its stored output.
   */
  outputShown?: boolean;
}

export interface BoardIndex {
  cards(userId: string | null): RuntimeCard[];
  subscribe(listener: (card: RuntimeCard) => void): () => void;
  /** Reloads every card (boot, Reconciler pass). */
  loadAll(): Promise<void>;
  /** Reloads one task's card. */
  refresh(taskId: string): Promise<void>;
  /**
   * Shows rows a write just returned (a compare-and-set's new row, a created
   * task), with no read: the card is the row, not a copy of it. Without a
   * task (and none cached) it reads the card like `refresh`.
   */
  apply(session: Session, task?: Task, options?: ApplyOptions): Promise<void>;
  appendOutput(sessionId: string, chunk: string): void;
  /** Keys and live positions of the queued cards (BoardSource.line). */
  readonly line: BoardLine;
  /** Stops listening to the pool. */
  close(): void;
}

const columnOf = (s: Session): RuntimeColumn =>
  s.status === 'queued'
    ? 'queued'
    : s.status === 'running'
      ? 'running'
      : s.status === 'succeeded'
        ? 'done'
        : 'failed';

/** Cuts a line to the card's limit, marking the cut. */
export function cutLine(line: string): string {
  return capLine(line, CARD_LINE_CHARS);
}

/** queued < running < a final status: the order a session's statuses come in. */
const stage = (s: Session): number => (s.status === 'queued' ? 0 : s.status === 'running' ? 1 : 2);

/**
 * Whether `next` is a later version of the card's session than `prev`.
 * Rows only move forward (attempt, then epoch, then status, then time), so a
 * read or write that answers late can never put an older row back.
 *
 * @example
 * ```ts
 * const row = (attempt: number, epoch: number, status: string, at: number) => ({ attempt, epoch, status, updatedAt: new Date(at) }) as never;
 * isNewer(row(1, 1, 'running', 5), row(1, 1, 'succeeded', 5)) // => true
 * isNewer(row(1, 1, 'succeeded', 5), row(1, 1, 'running', 9)) // => false
 * isNewer(row(1, 2, 'running', 5), row(1, 1, 'running', 9)) // => false
 * isNewer(row(1, 1, 'failed', 5), row(2, 0, 'queued', 6)) // => true
 * isNewer(row(1, 1, 'running', 5), row(1, 1, 'running', 5)) // => true
 * ```
 */
export function isNewer(prev: Session, next: Session): boolean {
  return (
    (next.attempt - prev.attempt ||
      next.epoch - prev.epoch ||
      stage(next) - stage(prev) ||
      next.updatedAt.getTime() - prev.updatedAt.getTime() ||
      1) > 0
  );
}

const byBoardOrder = (a: Entry, b: Entry) =>
  a.task.createdAt.getTime() - b.task.createdAt.getTime() || (a.task.id < b.task.id ? -1 : 1);

/** Characters of a stored output the board reads back: enough for its last lines. */
export const RESTORE_TAIL_CHARS = CARD_OUTPUT_LINES * (CARD_LINE_CHARS + 1) * 4;

/**
 * The last `n` lines of a tail read from a stored output. The tail's first
 * line is dropped when it may be the end of a longer line (the tail did not
 * start the output), unless it is all there is. Pure.
 *
 * @example
 * ```ts
 * lastLines('a\nb\nc\n', 2, true) // => ['b', 'c']
 * lastLines('a\nb\nc', 5, true) // => ['a', 'b', 'c']
 * lastLines('…rt of a\nb', 5, false) // => ['b']
 * lastLines('one long line', 5, false) // => ['one long line']
 * lastLines('', 5, true) // => []
 * ```
 */
export function lastLines(tail: string, n: number, whole: boolean): string[] {
  const lines = tail.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (!whole && lines.length > 1) lines.shift();
  return lines.slice(-n);
}

/**
 * How often moved positions are pushed at most. Every grant anywhere moves
 * every card behind it, so pushing each move would cost O(queued) per tick:
 * the pass runs at most once per `pushEvery` (on the caller's clock), and
 * `cards()` stays exact between passes (it computes positions live).
 */
export interface BoardPushOptions {
  schedule(fn: () => void, ms: number): void;
  pushEveryMs: number;
}

export function createBoardIndex(
  db: Db,
  pool?: BoardPositions,
  push?: BoardPushOptions,
): BoardIndex {
  const entries = new Map<string, Entry>();
  const bySession = new Map<string, string>();
  /** Task ids whose card is in the queued column. */
  const queued = new Set<string>();
  /** Of those, the ones whose session has no key (renumbered by this board). */
  const unkeyed = new Set<string>();
  const listeners = new Set<(card: RuntimeCard) => void>();
  const lineListeners = new Set<() => void>();
  const emitted = new Map<string, string>();
  let pending = false;

  /**
   * A stand-in for sessions the pool does not know (yet: before its first
   * load, or a row another node queued before this pool's next rebuild): the
   * database's first-come order among the queued cards. Computed once per
   * pass, and only when some card needs it.
   */
  const dbRanks = (): Map<string, number> => {
    const line = [...queued]
      .map((id) => entries.get(id)?.session)
      .filter((s): s is Session => s !== undefined)
      .sort(
        (a, b) =>
          a.enqueuedAt.getTime() - b.enqueuedAt.getTime() ||
          (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
    return new Map(line.map((s, i) => [s.id, i + 1]));
  };

  /** The pool's position; else the one last shown; else the database's order. */
  const positionsOf = (list: Iterable<Entry>): Map<string, number> => {
    const out = new Map<string, number>();
    let ranks: Map<string, number> | undefined;
    for (const e of list) {
      const place = pool?.placeOf(e.session) ?? null;
      if (place !== null) out.set(e.task.id, place);
      else if (e.position !== null) out.set(e.task.id, e.position);
      else {
        ranks ??= dbRanks();
        out.set(e.task.id, ranks.get(e.session.id) ?? 1);
      }
    }
    return out;
  };

  const toCard = (e: Entry, position: number | null): RuntimeCard => {
    const s = e.session;
    const lines = e.partial === '' ? e.lines : [...e.lines, cutLine(e.partial)];
    return {
      taskId: e.task.id,
      userId: e.task.userId,
      title: e.task.title,
      column: columnOf(s),
      sessionId: s.id,
      attempt: s.attempt,
      status: s.status,
      queued:
        s.status === 'queued'
          ? { position: position ?? 1, since: s.enqueuedAt.toISOString() }
          : null,
      running:
        s.status === 'running' ? { since: (s.claimedAt ?? s.updatedAt).toISOString() } : null,
      failure:
        s.status === 'failed'
          ? { reason: s.failureReason ?? 'unknown', recoverable: s.userRecoverable }
          : null,
      exitCode: s.exitCode,
      lastOutput: lines.slice(-CARD_OUTPUT_LINES),
      previous: e.previous,
      updatedAt: new Date(
        Math.max(s.updatedAt.getTime(), e.task.updatedAt.getTime()),
      ).toISOString(),
    };
  };

  /** Emits the given cards that differ from what listeners last saw, in board order. */
  const publish = (taskIds: Iterable<string>) => {
    const changed: RuntimeCard[] = [];
    const list = [...new Set(taskIds)]
      .map((id) => entries.get(id))
      .filter((e): e is Entry => e !== undefined)
      .sort(byBoardOrder);
    for (const e of list) {
      const card = toCard(e, e.position);
      const json = JSON.stringify(card);
      if (emitted.get(card.taskId) === json) continue;
      emitted.set(card.taskId, json);
      changed.push(card);
    }
    for (const card of changed) for (const l of listeners) l(card);
  };

  /** Brings the queued cards' positions up to the pool's; returns the ones that moved. */
  const reposition = (only?: Iterable<string>): string[] => {
    const ids = only === undefined ? [...queued] : [...only].filter((id) => queued.has(id));
    const list = ids.map((id) => entries.get(id)).filter((e): e is Entry => e !== undefined);
    const next = positionsOf(list);
    const moved: string[] = [];
    for (const e of list) {
      const p = next.get(e.task.id) ?? null;
      if (p !== e.position) {
        e.position = p;
        moved.push(e.task.id);
      }
    }
    return moved;
  };

  const unsubscribePool = pool?.subscribe(() => {
    if (pending || (listeners.size === 0 && lineListeners.size === 0)) return;
    pending = true;
    const pass = () => {
      pending = false;
      publish(reposition(unkeyed));
      for (const l of lineListeners) l();
    };
    if (push === undefined) queueMicrotask(pass);
    else push.schedule(pass, push.pushEveryMs);
  });

  /**
   * A queued cancel closes its user's line up behind it: the tick moves each
   * later queued session of that user one turn up (rt_tick), rows its reply
   * does not carry, so the board moves them itself (from the turn it holds
   * for the cancelled one, so several cancels in one tick add up) and shows
   * them again: their keys, and so their order among other users', moved.
   */
  const closeUp = (userId: string, turn: number | null) => {
    if (turn === null) return;
    const moved: string[] = [];
    for (const id of queued) {
      const e = entries.get(id);
      const t = e?.session.turn ?? null;
      if (e === undefined || e.task.userId !== userId || t === null || t <= turn) continue;
      e.session = { ...e.session, turn: t - 1 };
      moved.push(id);
    }
    if (moved.length > 0)
      queueMicrotask(() => {
        reposition(moved);
        publish(moved);
      });
  };

  /** Returns false (and changes nothing) when the card already shows a later row. */
  const put = (task: Task, session: Session): boolean => {
    const prev = entries.get(task.id);
    if (prev !== undefined && !isNewer(prev.session, session)) return false;
    if (prev !== undefined && prev.task.updatedAt.getTime() > task.updatedAt.getTime())
      task = prev.task;
    const same = prev?.session.id === session.id;
    const isQueued = session.status === 'queued';
    if (same && prev.session.status === 'queued' && session.status === 'cancelled')
      closeUp(task.userId, prev.session.turn);
    const output = same ? { lines: prev.lines, partial: prev.partial } : { lines: [], partial: '' };
    // A finished run's last line grows no more: nothing of it is kept beyond the card's lines.
    const { lines, partial } =
      isQueued || session.status === 'running' ? output : endOutput(output, CARD_OUTPUT);
    entries.set(task.id, {
      task,
      session,
      lines,
      partial,
      position: isQueued && same ? prev.position : null,
      restored: same ? prev.restored : false,
      previous: same
        ? prev.previous
        : prev !== undefined && prev.session.attempt < session.attempt
          ? {
              attempt: prev.session.attempt,
              reason: prev.session.failureReason ?? prev.session.status,
            }
          : (prev?.previous ?? null),
    });
    if (prev !== undefined && !same) bySession.delete(prev.session.id);
    bySession.set(session.id, task.id);
    if (isQueued) queued.add(task.id);
    else queued.delete(task.id);
    if (isQueued && (session.turn === null || session.joinSeq === null)) unkeyed.add(task.id);
    else unkeyed.delete(task.id);
    return true;
  };

  /** Brings one card up to date after `put`. */
  const show = async (taskId: string) => {
    await restoreSoon(taskId);
    reposition([taskId]);
    publish([taskId]);
  };

  /**
   * A finished card with no output in memory (this boot did not run it: a
   * restart, or another node ran it) reads the tail of the output stored on
   * its row, once.
   */
  const restoreOutput = async (taskIds: readonly string[]) => {
    const want = taskIds
      .map((id) => entries.get(id))
      .filter(
        (e): e is Entry =>
          e !== undefined &&
          !e.restored &&
          e.lines.length === 0 &&
          e.partial === '' &&
          e.session.status !== 'queued' &&
          e.session.status !== 'running',
      );
    if (want.length === 0) return;
    for (const e of want) e.restored = true;
    const rows = await db
      .selectFrom('session_outputs')
      .select([
        'session_id',
        sql<string>`right(text, ${RESTORE_TAIL_CHARS})`.as('tail'),
        sql<boolean>`length(text) <= ${RESTORE_TAIL_CHARS}`.as('whole'),
      ])
      .where(
        'session_id',
        'in',
        want.map((e) => e.session.id),
      )
      .execute();
    for (const r of rows) {
      const e = entries.get(bySession.get(r.session_id) ?? '');
      if (e === undefined || e.session.id !== r.session_id || e.lines.length > 0) continue;
      e.lines = lastLines(r.tail, CARD_OUTPUT_LINES, r.whole).map(cutLine);
    }
  };

  /**
   * One read for every card that needs its stored output in this turn of
   * the loop: a tick or a feed batch finishes many runs at once, and a read
   * per card would cost a statement per job.
   */
  let batch: { ids: string[]; done: Promise<void> } | null = null;
  const restoreSoon = (taskId: string): Promise<void> => {
    if (batch === null) {
      const ids: string[] = [];
      batch = {
        ids,
        done: Promise.resolve().then(() => {
          batch = null;
          return restoreOutput(ids);
        }),
      };
    }
    batch.ids.push(taskId);
    return batch.done;
  };

  const refresh = async (taskId: string): Promise<void> => {
    const taskRow = await db
      .selectFrom('tasks')
      .selectAll()
      .where('id', '=', taskId)
      .executeTakeFirst();
    const sessionRow = await db
      .selectFrom('sessions')
      .selectAll()
      .where('task_id', '=', taskId)
      .orderBy('attempt', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (taskRow === undefined || sessionRow === undefined) return;
    if (put(toTask(taskRow), toSession(sessionRow))) await show(taskId);
  };

  return {
    cards(userId) {
      const list = [...entries.values()]
        .filter((e) => userId === null || e.task.userId === userId)
        .sort(byBoardOrder);
      const pos = positionsOf(list.filter((e) => e.session.status === 'queued'));
      return list.map((e) => toCard(e, pos.get(e.task.id) ?? null));
    },
    subscribe(listener) {
      // With nobody listening the passes were skipped, so the positions last
      // shown may be behind the lines (a later arrival took an earlier turn).
      // The first listener reads cards() live; catch the shown positions up
      // and forget what was emitted for them, so the next move is told even
      // when it lands back on a number once sent.
      if (listeners.size === 0) for (const id of reposition()) emitted.delete(id);
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async loadAll() {
      const tasks = (await db.selectFrom('tasks').selectAll().execute()).map(toTask);
      // The latest attempt of every task, in one query.
      const sessions = (
        await db
          .selectFrom('sessions')
          .selectAll()
          .distinctOn('task_id')
          .orderBy('task_id')
          .orderBy('attempt', 'desc')
          .execute()
      ).map(toSession);
      const latest = new Map(sessions.map((s) => [s.taskId, s]));
      // Why each later attempt's predecessor ended, in one more query (only
      // tasks that ran more than once).
      const before = await sql<{ task_id: string; attempt: number; why: string }>`
        SELECT DISTINCT ON (p.task_id) p.task_id, p.attempt, coalesce(p.failure_reason, p.status) AS why
        FROM sessions p
        WHERE p.task_id IN (SELECT task_id FROM sessions WHERE attempt > 1)
          AND p.attempt < (SELECT max(m.attempt) FROM sessions m WHERE m.task_id = p.task_id)
        ORDER BY p.task_id, p.attempt DESC`.execute(db);
      const previousOf = new Map(
        before.rows.map((r) => [r.task_id, { attempt: Number(r.attempt), reason: r.why }]),
      );
      const ids: string[] = [];
      for (const t of tasks) {
        const s = latest.get(t.id);
        if (s) {
          put(t, s);
          const e = entries.get(t.id);
          const previous = previousOf.get(t.id);
          if (e !== undefined && previous !== undefined && e.previous === null)
            e.previous = previous;
          ids.push(t.id);
        }
      }
      await restoreOutput(ids);
      reposition();
      publish(ids);
    },
    refresh,
    async apply(session, task, options = {}) {
      const known = task ?? entries.get(session.taskId)?.task;
      if (known === undefined) return refresh(session.taskId);
      if (!put(known, session)) return;
      const e = entries.get(session.taskId);
      if (options.outputShown === true && e !== undefined) e.restored = true;
      await show(session.taskId);
    },
    appendOutput(sessionId, chunk) {
      const taskId = bySession.get(sessionId);
      const e = taskId === undefined ? undefined : entries.get(taskId);
      if (e === undefined || e.session.id !== sessionId) return;
      ({ lines: e.lines, partial: e.partial } = pushOutput(e, chunk, CARD_OUTPUT));
      publish([e.task.id]);
    },
    line: {
      keyOf(card) {
        const s = entries.get(card.taskId)?.session;
        // A session keeps its turn after it leaves the line (the row keeps it).
        if (s === undefined || s.id !== card.sessionId || s.turn === null || s.joinSeq === null)
          return null;
        return { turn: s.turn, joinSeq: s.joinSeq };
      },
      positionOf(card) {
        const s = entries.get(card.taskId)?.session;
        if (s === undefined || s.id !== card.sessionId || unkeyed.has(card.taskId)) return null;
        return pool?.placeOf(s) ?? null;
      },
      subscribe(listener) {
        lineListeners.add(listener);
        return () => lineListeners.delete(listener);
      },
    },
    close() {
      unsubscribePool?.();
    },
  };
}
