/**
 * What the board's index offers the runtime (src/actors/runtimeBoard.ts
 * builds it): its reads, the rows it is handed, and how often it pushes
 * moved positions.
 */
import type { BoardLine } from '../board/boardPort.js';
import type { Session, StoredTail, TaskSummary } from '../db/index.js';
import type { RuntimeCard } from './runtimeTypes.js';

export interface ApplyOptions {
  /**
   * The run's whole output already went through `appendOutput` (this boot
   * ran it and finished it): a finished card need not read its stored output.
   */
  outputShown?: boolean;
  /**
   * The end of the run's stored output, read with the row (the feed's read),
   * or `null` when it stored none: a finished card need not read it again.
   */
  storedOutput?: StoredTail | null;
  /**
   * The tick the row is exact as of (the reply or the feed's read that
   * carried it): a queued cancel carried at or before it is in its turn
   * already (src/actors/runtimeBoardEntries.ts, `closeUp`).
   */
  asOf?: number;
}

export interface BoardIndex {
  cards(userId: string | null): RuntimeCard[];
  /** `onRemoved`: told of the task ids whose cards left the board (`evict`). */
  subscribe(
    listener: (card: RuntimeCard) => void,
    onRemoved?: (taskIds: readonly string[]) => void,
  ): () => void;
  /** Loads every card (boot), but those of runs that ended before `endedSince` (epoch ms). */
  loadAll(endedSince?: number): Promise<void>;
  /**
   * Drops the cards of runs that ended before `before` (epoch ms; their
   * rows are past retention) and tells the removal listeners; returns their
   * task ids.
   */
  evict(before: number): string[];
  /** Reloads one task's card. */
  refresh(taskId: string): Promise<void>;
  /**
   * Shows rows a write just returned (a compare-and-set's new row, a created
   * task), with no read: the card is the row, not a copy of it. Without a
   * task (and none cached) it reads the card like `refresh`.
   */
  apply(session: Session, task?: TaskSummary, options?: ApplyOptions): Promise<void>;
  appendOutput(sessionId: string, chunk: string): void;
  /** The running cards' sessions and epochs (src/actors/liveTailShare.ts reads their tails). */
  runningSessions(): { sessionId: string; epoch: number }[];
  /**
   * Shows a run's output as its node shares it (`lines`: the card's last
   * lines), when the card shows that session running at `epoch`.
   */
  showTail(sessionId: string, epoch: number, lines: readonly string[]): void;
  /** Keys and live positions of the queued cards (BoardSource.line). */
  readonly line: BoardLine;
  /** Stops listening to the pool. */
  close(): void;
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
