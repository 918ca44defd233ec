/**
 * Rows the board holds back while nobody reads it (src/actors/runtimeBoard.ts).
 * A job's rows reach every node's board several times (queued, granted,
 * started, finished, on the node that ran it and on every other node); a
 * board with no listener applies none of them until something reads it,
 * and then only the latest row of each task. Every read of the board
 * (`cards()`, the line's keys and positions, a subscribe, an output chunk)
 * applies what is held first, synchronously, so no reader ever sees a card
 * behind the rows it was handed.
 *
 * Why: with three nodes, each node's board took every other node's rows
 * (~360 µs of node CPU per job over the two that ran none of them, in the
 * peers bench), though nobody looked at those boards.
 */
import type { Session, StoredTail, TaskSummary } from '../db/index.js';
import { isNewer } from './runtimeBoardCard.js';

/** What `BoardIndex.apply` was handed: its rows and its ApplyOptions, with the flag spelled out. */
export interface HeldRow {
  session: Session;
  task: TaskSummary | undefined;
  outputShown: boolean;
  storedOutput: StoredTail | null | undefined;
  /** The tick the row is exact as of (ApplyOptions.asOf); absent: unknown. */
  asOf?: number;
}

/**
 * Most tasks held before the oldest is applied as each new one comes: it
 * bounds both the memory and the work the first read after a quiet spell
 * does at once (a full backlog added ~5 ms to that read on the development
 * machine: bench/results/boardBacklog.md).
 */
export const BACKLOG_MAX = 5_000;

/** Nothing to apply now (shared: `hold` runs for every row of every job). */
const NONE: readonly HeldRow[] = Object.freeze([]);

/**
 * One held row and a newer one of the same task, as one row: what applying
 * both in order would leave on the card. `undefined`: they cannot be one
 * (another attempt: the card remembers why the previous one ended, so the
 * held row is applied first).
 *
 * @example
 * ```ts
 * const s = (id: string, attempt: number, status: string, at: number) => ({ id, attempt, epoch: 1, status, updatedAt: new Date(at) }) as never;
 * const t = (at: number) => ({ id: 'task_1', updatedAt: new Date(at) }) as never;
 * const held = { session: s('s1', 1, 'running', 5), task: t(1), outputShown: true, storedOutput: undefined };
 * combine(held, { session: s('s1', 1, 'succeeded', 6), task: undefined, outputShown: false, storedOutput: null }) // => { session: s('s1', 1, 'succeeded', 6), task: t(1), outputShown: true, storedOutput: null }
 * combine({ ...held, task: t(8) }, { session: s('s1', 1, 'failed', 7), task: t(2), outputShown: false, storedOutput: undefined }).task // => t(8)
 * combine(held, { session: s('s1', 1, 'queued', 9), task: t(9), outputShown: false, storedOutput: undefined }) // => held
 * combine(held, { session: s('s2', 2, 'queued', 7), task: t(7), outputShown: false, storedOutput: undefined }) // => undefined
 * ```
 */
export function combine(held: HeldRow, next: HeldRow): HeldRow | undefined {
  if (next.session.id !== held.session.id) return undefined;
  // An older row handed in late changes nothing, its flags included (as the card would refuse it).
  if (!isNewer(held.session, next.session)) return held;
  const task =
    next.task === undefined ||
    (held.task !== undefined && held.task.updatedAt.getTime() > next.task.updatedAt.getTime())
      ? held.task
      : next.task;
  // A stored tail counts on a finished row only, and the first that names
  // one sets the card's lines; one that says "none stored" only marks it looked for.
  const first = ended(held.session) ? held.storedOutput : undefined;
  return {
    session: next.session,
    task,
    outputShown: held.outputShown || next.outputShown,
    storedOutput: first ?? (next.storedOutput === undefined ? first : next.storedOutput),
    ...(next.asOf === undefined ? {} : { asOf: next.asOf }),
  };
}

const ended = (s: Session): boolean => s.status !== 'queued' && s.status !== 'running';

/** The held rows, one per task, in the order their tasks were first held. */
export class BoardBacklog {
  private readonly rows = new Map<string, HeldRow>();
  /** Session id -> task id of each held row (an output chunk names only its session). */
  private readonly taskOf = new Map<string, string>();

  constructor(private readonly max = BACKLOG_MAX) {}

  get size(): number {
    return this.rows.size;
  }

  /**
   * Holds `row`; returns the rows to apply now. A card's row moves no other
   * card, so held rows of different tasks may reach their cards in any
   * order. The one row that does move others, a cancel (a queued card's
   * line closes up behind it, from the turns the board holds), is never
   * held: it comes back after every held row. So does another attempt of a
   * held task (the card remembers why the previous attempt ended, so the
   * held row must reach it first). Past `max` tasks, the task held longest
   * comes back. `shown`: the row the task's card shows now; a row that is
   * not newer comes straight back, so every held row is one the card would
   * take, which is what lets `combine` stand for applying both in order.
   */
  hold(row: HeldRow, shown?: Session): readonly HeldRow[] {
    const taskId = row.session.taskId;
    const held = this.rows.get(taskId);
    // Not news to the card (its very row, or an older one): nothing to hold, the card refuses it or takes its flags.
    if (
      held === undefined &&
      shown !== undefined &&
      (shown === row.session || !isNewer(shown, row.session))
    )
      return [row];
    const one = held === undefined ? row : combine(held, row);
    if (one === undefined || row.session.status === 'cancelled') return [...this.drain(), row];
    if (one === held) return NONE;
    this.rows.set(taskId, one);
    if (held !== undefined) return NONE;
    this.taskOf.set(one.session.id, taskId);
    if (this.rows.size <= this.max) return NONE;
    const [oldest] = this.rows;
    return oldest === undefined ? NONE : [this.release(oldest[0], oldest[1])];
  }

  /** The held row of the task showing `sessionId`, no longer held (`undefined`: none). */
  takeSession(sessionId: string): HeldRow | undefined {
    const taskId = this.taskOf.get(sessionId);
    return taskId === undefined ? undefined : this.takeTask(taskId);
  }

  /** The held row of `taskId`, no longer held (`undefined`: none). */
  takeTask(taskId: string): HeldRow | undefined {
    const row = this.rows.get(taskId);
    return row === undefined ? undefined : this.release(taskId, row);
  }

  private release(taskId: string, row: HeldRow): HeldRow {
    this.rows.delete(taskId);
    this.taskOf.delete(row.session.id);
    return row;
  }

  /** Every held row, in order, and none held after. */
  drain(): HeldRow[] {
    const all = [...this.rows.values()];
    this.rows.clear();
    this.taskOf.clear();
    return all;
  }
}
