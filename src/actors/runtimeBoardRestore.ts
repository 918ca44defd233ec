/**
 * A finished card with no output in memory (this boot did not run it: a
 * restart, or another node ran it) reads the tail of the output stored on
 * its row, once. One read serves every card that needs it in one turn of
 * the loop: a tick or a feed batch finishes many runs at once, and a read
 * per card would cost a statement per job. The feed's read brings the tails
 * of the runs it reports finished (`take`), so those need none at all.
 */
import type { Db, StoredTail } from '../db/index.js';
import { type BoardEntry, CARD_OUTPUT_LINES, cutLine } from './runtimeBoardCard.js';
import { lastLines, readOutputTails } from './runtimeBoardRows.js';

export interface OutputRestoreOptions {
  db: Db;
  /** The board's entry of a task, as it is when the read starts. */
  entryOf(taskId: string): BoardEntry | undefined;
  /** The board's entry whose card shows `sessionId`, as it is when the read answers. */
  entryOfSession(sessionId: string): BoardEntry | undefined;
}

/** The card shows no output of its own: none, or another node's shared tail (the stored output is newer). */
const noOwnOutput = (e: BoardEntry): boolean =>
  e.shared === true || (e.lines.length === 0 && e.partial === '');

export class OutputRestore {
  private batch: { ids: string[]; done: Promise<string[]> } | null = null;

  constructor(private readonly o: OutputRestoreOptions) {}

  /** Restores the given tasks' cards now (one read), where they need it; returns the ones given lines. */
  async now(taskIds: readonly string[]): Promise<string[]> {
    const want = taskIds
      .map((id) => this.o.entryOf(id))
      .filter(
        (e): e is BoardEntry =>
          e !== undefined &&
          !e.restored &&
          noOwnOutput(e) &&
          e.session.status !== 'queued' &&
          e.session.status !== 'running',
      );
    if (want.length === 0) return [];
    for (const e of want) e.restored = true;
    const tails = await readOutputTails(
      this.o.db,
      want.map((e) => e.session.id),
    );
    const restored: string[] = [];
    for (const r of tails) {
      const e = this.o.entryOfSession(r.sessionId);
      // The card moved on to a later attempt, or its own output arrived meanwhile.
      if (e === undefined || e.session.id !== r.sessionId || !noOwnOutput(e)) continue;
      e.lines = lastLines(r.tail, CARD_OUTPUT_LINES, r.whole).map(cutLine);
      e.partial = '';
      e.shared = false;
      restored.push(e.task.id);
    }
    return restored;
  }

  /**
   * A tail read with the card's row (`null`: nothing stored): the card is
   * restored from it, and `now` will not read it again.
   */
  take(e: BoardEntry, stored: StoredTail | null): void {
    if (e.session.status === 'queued' || e.session.status === 'running') return;
    e.restored = true;
    if (stored !== null && noOwnOutput(e)) {
      e.lines = lastLines(stored.tail, CARD_OUTPUT_LINES, stored.whole).map(cutLine);
      e.partial = '';
      e.shared = false;
    }
  }

  /** As `now`, batched with every other call in this turn of the loop; returns the batch's restored ones. */
  soon(taskId: string): Promise<string[]> {
    if (this.batch === null) {
      const ids: string[] = [];
      this.batch = {
        ids,
        done: Promise.resolve().then(() => {
          this.batch = null;
          return this.now(ids);
        }),
      };
    }
    this.batch.ids.push(taskId);
    return this.batch.done;
  }
}
