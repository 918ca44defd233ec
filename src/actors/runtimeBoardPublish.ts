/**
 * Who the board tells of a card, and what it told them last
 * (src/actors/runtimeBoard.ts). A card is told again only when its JSON
 * changed, so a row that moves nothing a client sees (a handle recorded, a
 * finish handed back to the runner that wrote it) costs no message; a
 * card whose line key moved is told even when its JSON did not, because the
 * hub orders the queued column by that key and it is not in the card.
 *
 * A listener that throws is reported as a `RuntimeListenerError`, not
 * propagated (src/actors/runtimeListenerError.ts says why).
 */

import type { UserAtCap } from '../board/boardCard.js';
import { Listeners } from '../supervisor/Listeners.js';
import { type BoardEntry, byBoardOrder, toCard } from './runtimeBoardCard.js';
import type { BoardEntries } from './runtimeBoardEntries.js';
import { RuntimeListenerError } from './runtimeListenerError.js';
import type { RuntimeCard } from './runtimeTypes.js';

export class CardPublisher {
  private readonly listeners: Listeners<RuntimeCard>;
  /** Told of cards that left the board (retention), by task id. */
  private readonly removals: Listeners<readonly string[]>;
  /** Task id -> the card's JSON as listeners last saw it. */
  private readonly emitted = new Map<string, string>();

  constructor(
    private readonly entries: BoardEntries,
    /** Where a listener's throw goes. */
    onThrow: (error: RuntimeListenerError) => void,
    /** A user's at-cap state now (it moves with the lines, which tell the line's listeners). */
    private readonly atCapOf: (userId: string) => UserAtCap | null = () => null,
  ) {
    this.listeners = new Listeners((error) => onThrow(new RuntimeListenerError('board', error)));
    this.removals = new Listeners((error) => onThrow(new RuntimeListenerError('board', error)));
  }

  /** How many listen. */
  get size(): number {
    return this.listeners.size;
  }

  /** `onRemoved`: told of the task ids whose cards left the board. */
  add(
    listener: (card: RuntimeCard) => void,
    onRemoved?: (taskIds: readonly string[]) => void,
  ): () => void {
    const off = this.listeners.add(listener);
    const offRemoved = onRemoved === undefined ? () => {} : this.removals.add(onRemoved);
    return () => {
      off();
      offRemoved();
    };
  }

  /** Tells listeners these cards left the board; what was told of them is forgotten. */
  removed(taskIds: readonly string[]): void {
    if (taskIds.length === 0) return;
    for (const id of taskIds) this.emitted.delete(id);
    this.removals.emit(taskIds);
  }

  /** The card's next change is told whatever it is (what was told of it is out of date). */
  forget(taskId: string): void {
    this.emitted.delete(taskId);
  }

  /**
   * Tells listeners of the given cards whose JSON changed, in board order;
   * `keyMoved`: also those whose only change is their line key.
   */
  publish(taskIds: readonly string[], keyMoved = false): void {
    // Nobody to tell (a node with no board served): no card is built. What
    // was emitted for these is out of date now; a later listener reads
    // cards() live, and their next change is told whatever it was before.
    if (this.listeners.size === 0) {
      for (const id of taskIds) this.emitted.delete(id);
      return;
    }
    const changed: RuntimeCard[] = [];
    // One card (every change of a job's row) needs no dedup and no sort.
    const one = taskIds.length === 1 ? this.entries.get(taskIds[0] as string) : undefined;
    const list =
      one !== undefined
        ? [one]
        : [...new Set(taskIds)]
            .map((id) => this.entries.get(id))
            .filter((e): e is BoardEntry => e !== undefined)
            .sort(byBoardOrder);
    for (const e of list) {
      const card = toCard(
        e,
        e.position,
        e.session.status === 'queued' ? this.atCapOf(e.task.userId) : null,
      );
      const json = JSON.stringify(card);
      if (!keyMoved && this.emitted.get(card.taskId) === json) continue;
      this.emitted.set(card.taskId, json);
      changed.push(card);
    }
    for (const card of changed) this.listeners.emit(card);
  }
}
