/**
 * The board's in-memory index: one card per task (the task and its latest
 * session), loaded from the rows at boot and refreshed, task by task, after
 * every change this node makes (and all of them on every Reconciler pass,
 * which is how other nodes' changes arrive). `cards()` must be synchronous
 * (the server stamps a sequence number on a snapshot), hence the cache.
 *
 * Positions are the global line in dispatch order (enqueued_at, id), the
 * database's order; when one card leaves the line every card behind it
 * moves, and each of those is emitted too.
 */
import type { Db, Session, Task } from '../db/index.js';
import { toSession, toTask } from '../db/rows.js';
import type { RuntimeCard, RuntimeColumn } from './runtimeTypes.js';

/** Most output lines a card carries, and the longest line before it is cut. */
export const CARD_OUTPUT_LINES = 20;
export const CARD_LINE_CHARS = 500;

interface Entry {
  task: Task;
  session: Session;
  lines: string[];
  /** An unfinished last line, still growing. */
  partial: string;
}

export interface BoardIndex {
  cards(userId: string | null): RuntimeCard[];
  subscribe(listener: (card: RuntimeCard) => void): () => void;
  /** Reloads every card (boot, Reconciler pass). */
  loadAll(): Promise<void>;
  /** Reloads one task's card. */
  refresh(taskId: string): Promise<void>;
  appendOutput(sessionId: string, chunk: string): void;
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
  return line.length <= CARD_LINE_CHARS ? line : `${line.slice(0, CARD_LINE_CHARS - 1)}…`;
}

export function createBoardIndex(db: Db): BoardIndex {
  const entries = new Map<string, Entry>();
  const bySession = new Map<string, string>();
  const listeners = new Set<(card: RuntimeCard) => void>();
  let emitted = new Map<string, string>();

  const positions = (): Map<string, number> => {
    const queued = [...entries.values()]
      .filter((e) => e.session.status === 'queued')
      .sort(
        (a, b) =>
          a.session.enqueuedAt.getTime() - b.session.enqueuedAt.getTime() ||
          (a.session.id < b.session.id ? -1 : a.session.id > b.session.id ? 1 : 0),
      );
    return new Map(queued.map((e, i) => [e.session.id, i + 1]));
  };

  const toCard = (e: Entry, position: number | undefined): RuntimeCard => {
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
      updatedAt: new Date(
        Math.max(s.updatedAt.getTime(), e.task.updatedAt.getTime()),
      ).toISOString(),
    };
  };

  const allCards = (): RuntimeCard[] => {
    const pos = positions();
    return [...entries.values()]
      .sort(
        (a, b) =>
          a.task.createdAt.getTime() - b.task.createdAt.getTime() ||
          (a.task.id < b.task.id ? -1 : 1),
      )
      .map((e) => toCard(e, pos.get(e.session.id)));
  };

  /** Emits every card that differs from what listeners last saw, in board order. */
  const publish = () => {
    const next = new Map<string, string>();
    const changed: RuntimeCard[] = [];
    for (const card of allCards()) {
      const json = JSON.stringify(card);
      next.set(card.taskId, json);
      if (emitted.get(card.taskId) !== json) changed.push(card);
    }
    emitted = next;
    for (const card of changed) for (const l of listeners) l(card);
  };

  const put = (task: Task, session: Session) => {
    const prev = entries.get(task.id);
    const same = prev?.session.id === session.id;
    entries.set(task.id, {
      task,
      session,
      lines: same ? prev.lines : [],
      partial: same ? prev.partial : '',
    });
    bySession.set(session.id, task.id);
  };

  return {
    cards(userId) {
      const cards = allCards();
      return userId === null ? cards : cards.filter((c) => c.userId === userId);
    },
    subscribe(listener) {
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
      for (const t of tasks) {
        const s = latest.get(t.id);
        if (s) put(t, s);
      }
      publish();
    },
    async refresh(taskId) {
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
      put(toTask(taskRow), toSession(sessionRow));
      publish();
    },
    appendOutput(sessionId, chunk) {
      const taskId = bySession.get(sessionId);
      const e = taskId === undefined ? undefined : entries.get(taskId);
      if (e === undefined || e.session.id !== sessionId) return;
      const parts = (e.partial + chunk).split('\n');
      e.partial = parts.pop() ?? '';
      e.lines = [...e.lines, ...parts.map(cutLine)].slice(-CARD_OUTPUT_LINES);
      publish();
    },
  };
}
