/**
 * The board's line (BoardSource.line): what the UI server asks of a queued
 * card it shows when it cuts a window, read live from the card's row and the
 * users' lines, since a grant or a finish moves positions and at-cap states
 * without changing any card (src/actors/runtimeBoard.ts says why).
 */
import type { BoardLine } from '../board/boardPort.js';
import type { Listeners } from '../supervisor/Listeners.js';
import type { BoardEntries } from './runtimeBoardEntries.js';
import type { BoardPositions } from './runtimeBoardPositions.js';

/** The line over `entries`; `catchUp` brings held rows to their cards before each read. */
export function boardLine(
  entries: BoardEntries,
  pool: BoardPositions | undefined,
  listeners: Listeners<void>,
  catchUp: () => void,
): BoardLine {
  /** The card's session as the board holds it, when it is that very session. */
  const sessionOf = (card: { taskId: string; sessionId: string }) => {
    catchUp();
    const s = entries.get(card.taskId)?.session;
    return s?.id === card.sessionId ? s : undefined;
  };
  return {
    keyOf(card) {
      const s = sessionOf(card);
      // A session keeps its turn after it leaves the line (the row keeps it).
      if (s === undefined || s.turn === null || s.joinSeq === null) return null;
      return { turn: s.turn, joinSeq: s.joinSeq };
    },
    positionOf(card) {
      const s = sessionOf(card);
      if (s === undefined || entries.unkeyed.has(card.taskId)) return null;
      return pool?.placeOf(s) ?? null;
    },
    atCapOf(card) {
      if (sessionOf(card)?.status !== 'queued') return null;
      return pool?.atCapOf(card.userId) ?? null;
    },
    subscribe(listener) {
      catchUp();
      return listeners.add(listener);
    },
  };
}
