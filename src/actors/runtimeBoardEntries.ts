/**
 * The board's cards as it keeps them (src/actors/runtimeBoard.ts): one
 * entry per task (the task and its latest session), which sessions they
 * show, which are in the queued column and which of those have no turn key
 * yet. `put` is the one way a row reaches a card: it refuses an older row
 * than the card shows, and it is where a queued cancel closes its user's
 * line up.
 */
import type { Session, Task, TaskSummary } from '../db/index.js';
import { endOutput } from '../machines/outputTail.js';
import { type BoardEntry, CARD_OUTPUT, isNewer } from './runtimeBoardCard.js';

export class BoardEntries {
  private readonly byTask = new Map<string, BoardEntry>();
  /** Session id -> the task whose card shows it. */
  private readonly bySession = new Map<string, string>();
  /** Task ids whose card is in the queued column. */
  readonly queued = new Set<string>();
  /** Of those, the ones whose session has no key (renumbered by the board). */
  readonly unkeyed = new Set<string>();
  /** Task ids whose card is in the running column. */
  readonly running = new Set<string>();

  /** `closedUp`: cards a cancel moved up their line (their keys changed, with no row of their own). */
  constructor(private readonly closedUp: (taskIds: string[]) => void) {}

  get(taskId: string): BoardEntry | undefined {
    return this.byTask.get(taskId);
  }

  /** The entry whose card shows `sessionId` (`undefined`: none does). */
  ofSession(sessionId: string): BoardEntry | undefined {
    const taskId = this.bySession.get(sessionId);
    return taskId === undefined ? undefined : this.byTask.get(taskId);
  }

  values(): IterableIterator<BoardEntry> {
    return this.byTask.values();
  }

  /**
   * Returns false (and changes nothing) when the card already shows a later
   * row. `asOf`: the tick the row is exact as of, when the caller knows it.
   */
  put(task: TaskSummary, session: Session, asOf?: number): boolean {
    const prev = this.byTask.get(task.id);
    if (prev !== undefined && !isNewer(prev.session, session)) return false;
    if (prev !== undefined && prev.task.updatedAt.getTime() > task.updatedAt.getTime())
      task = prev.task;
    else task = withoutSpec(task);
    const same = prev?.session.id === session.id;
    const isQueued = session.status === 'queued';
    // Cancelled while queued (never claimed): a run granted and then cancelled
    // (its running row unseen here: folded in a held row, or read past) left
    // the line at its grant, and the tick closed nobody up behind it.
    if (
      same &&
      prev.session.status === 'queued' &&
      session.status === 'cancelled' &&
      session.claimedAt === null
    )
      this.closeUp(task.userId, prev.session.turn, asOf);
    const output = same ? { lines: prev.lines, partial: prev.partial } : { lines: [], partial: '' };
    // A finished run's last line grows no more: nothing of it is kept beyond the card's lines.
    const { lines, partial } =
      isQueued || session.status === 'running' ? output : endOutput(output, CARD_OUTPUT);
    this.byTask.set(task.id, {
      task,
      session,
      lines,
      partial,
      position: isQueued && same ? prev.position : null,
      restored: same ? prev.restored : false,
      shared: same && prev.shared === true,
      asOf: asOf ?? null,
      previous: same
        ? prev.previous
        : prev !== undefined && prev.session.attempt < session.attempt
          ? {
              attempt: prev.session.attempt,
              reason: prev.session.failureReason ?? prev.session.status,
            }
          : (prev?.previous ?? null),
    });
    if (prev !== undefined && !same) this.bySession.delete(prev.session.id);
    this.bySession.set(session.id, task.id);
    if (isQueued) this.queued.add(task.id);
    else this.queued.delete(task.id);
    if (session.status === 'running') this.running.add(task.id);
    else this.running.delete(task.id);
    if (isQueued && (session.turn === null || session.joinSeq === null)) this.unkeyed.add(task.id);
    else this.unkeyed.delete(task.id);
    return true;
  }

  /**
   * Drops the cards of tasks whose run ended before `before` (epoch ms; a
   * final row without `finishedAt` ends at its last update): retention
   * (src/db/pruneFinished.ts) deletes their rows. Returns their task ids.
   */
  evict(before: number): string[] {
    const gone: string[] = [];
    for (const [taskId, e] of this.byTask) {
      if (!endedBefore(e.session, before)) continue;
      this.byTask.delete(taskId);
      this.bySession.delete(e.session.id);
      gone.push(taskId);
    }
    return gone;
  }

  /**
   * A queued cancel closes its user's line up behind it: the tick moves each
   * later queued session of that user one turn up (rt_tick), rows its reply
   * does not carry, so the board moves them itself (from the turn it holds
   * for the cancelled one, so several cancels in one tick add up) and shows
   * them again: their keys, and so their order among other users', moved.
   * A row read as of the cancel's own reply or read, or later (`asOf`), was
   * read after the tick moved it: its turn is closed up already (a reply
   * carries the cancel and another node's enqueue of that user, read after
   * the cancel moved it), and moving it again would put it a turn ahead of
   * its place on this board for good.
   */
  private closeUp(userId: string, turn: number | null, asOf: number | undefined): void {
    if (turn === null) return;
    const moved: string[] = [];
    for (const id of this.queued) {
      const e = this.byTask.get(id);
      const t = e?.session.turn ?? null;
      if (e === undefined || e.task.userId !== userId || t === null || t <= turn) continue;
      if (asOf !== undefined && typeof e.asOf === 'number' && e.asOf >= asOf) continue;
      e.session = { ...e.session, turn: t - 1 };
      moved.push(id);
    }
    if (moved.length > 0) this.closedUp(moved);
  }
}

/**
 * Whether a session's run ended before `before` (epoch ms). Pure.
 *
 * @example
 * ```ts
 * const at = (iso: string) => new Date(iso)
 * endedBefore({ status: 'succeeded', finishedAt: at('2026-07-01'), updatedAt: at('2026-07-01') }, Date.parse('2026-07-02')) // => true
 * endedBefore({ status: 'failed', finishedAt: null, updatedAt: at('2026-07-03') }, Date.parse('2026-07-02')) // => false
 * endedBefore({ status: 'queued', finishedAt: null, updatedAt: at('2026-07-01') }, Date.parse('2026-07-02')) // => false
 * ```
 */
export function endedBefore(
  s: Pick<Session, 'status' | 'finishedAt' | 'updatedAt'>,
  before: number,
): boolean {
  if (s.status === 'queued' || s.status === 'running') return false;
  return (s.finishedAt ?? s.updatedAt).getTime() < before;
}

/**
 * A task as a card keeps it: without its run spec, which only a runner
 * reads and which can be ~1 MB (a coding agent's prompt); a card of this
 * node's own task came with the whole task (its enqueue, its grant) and
 * kept the spec for as long as the card lived. The same object when it
 * has none. Pure.
 *
 * @example
 * ```ts
 * const at = new Date(0)
 * const summary = { id: 't', userId: 'u', title: 'x', column: 'done', createdAt: at, updatedAt: at, timeLimitMs: null }
 * withoutSpec({ ...summary, spec: { image: 'i', command: ['c'] } }) // => summary
 * withoutSpec(summary) === summary // => true
 * ```
 */
export function withoutSpec(task: TaskSummary | Task): TaskSummary {
  if (!('spec' in task)) return task;
  const { id, userId, title, column, createdAt, updatedAt, timeLimitMs } = task;
  return { id, userId, title, column, createdAt, updatedAt, timeLimitMs };
}

/**
 * Whether two versions of a task show the same card: the one object, or
 * the same row (its every change moves `updatedAt`). Pure.
 *
 * @example
 * ```ts
 * const at = new Date(0)
 * const t = { id: 't', userId: 'u', title: 'x', column: 'done', createdAt: at, updatedAt: at, timeLimitMs: null }
 * sameTask(t, { ...t, spec: { image: 'i', command: ['c'] } }) // => true
 * sameTask(t, { ...t, column: 'queued', updatedAt: new Date(1) }) // => false
 * // A limit written on its own (only ever by hand: a task's limit is set when it is queued).
 * sameTask(t, { ...t, timeLimitMs: 60_000 }) // => false
 * ```
 */
export function sameTask(a: TaskSummary, b: TaskSummary): boolean {
  return (
    a === b ||
    (a.id === b.id &&
      a.updatedAt.getTime() === b.updatedAt.getTime() &&
      a.column === b.column &&
      a.title === b.title &&
      a.timeLimitMs === b.timeLimitMs)
  );
}
