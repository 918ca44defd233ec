/**
 * What a queued card's page says it waits for. The grant order skips a
 * user who holds their whole cap, so "position 1" alone reads as a stuck
 * queue; `queued.atCap` (docs/board-protocol.md) tells the two waits apart.
 * Pure, so the words are tested without a browser.
 */
import type { BoardCard } from '../../board/boardPort.js';

/** The wait's words: `lead` opens the card's waiting line, `cap` (when set) is a line of its own. */
export interface WaitingWords {
  lead: string;
  cap: string | null;
}

/**
 * The words for `card` (queued), seen by its user, or by the admin
 * (`showUser`), who is not that user. A card from a server older than
 * `atCap` cannot tell: plain "waiting".
 *
 * @example
 * ```ts
 * const q = (atCap) => ({ userId: 'ann', queued: { position: 1, since: '', atCap } })
 * waitingWords(q({ running: 1, max: 1 }), false) // => { lead: 'waiting', cap: 'you are at your cap (1 of 1 running)' }
 * waitingWords(q({ running: 2, max: 2 }), true) // => { lead: 'waiting', cap: 'ann is at their cap (2 of 2 running)' }
 * waitingWords(q(null), false) // => { lead: 'waiting for a free runner', cap: null }
 * waitingWords(q(undefined), false) // => { lead: 'waiting', cap: null }
 * ```
 */
export function waitingWords(
  card: Pick<BoardCard, 'userId' | 'queued'>,
  showUser: boolean,
): WaitingWords {
  const atCap = card.queued?.atCap;
  if (atCap === undefined) return { lead: 'waiting', cap: null };
  if (atCap === null) return { lead: 'waiting for a free runner', cap: null };
  const counts = `(${atCap.running} of ${atCap.max} running)`;
  return {
    lead: 'waiting',
    cap: showUser ? `${card.userId} is at their cap ${counts}` : `you are at your cap ${counts}`,
  };
}

/**
 * The card's accessible name: its title and status and, while it waits, its
 * place and the cap it waits on. A card is a stop of the arrow keys, and a
 * screen reader says its name there, not its lines; "queued" alone would not
 * tell a card that is next from one held back by its user's cap.
 *
 * @example
 * ```ts
 * const q = (position, atCap) => ({ title: 'build', status: 'queued', userId: 'ann', queued: { position, since: '', atCap } })
 * cardLabel(q(1, { running: 1, max: 1 }), false) // => 'build, queued, position 1, you are at your cap (1 of 1 running)'
 * cardLabel(q(3, null), true) // => 'build, queued, position 3'
 * cardLabel(q(0, null), false) // => 'build, queued, starting'
 * cardLabel({ title: 'build', status: 'running', userId: 'ann', queued: null }, false) // => 'build, running'
 * ```
 */
export function cardLabel(
  card: Pick<BoardCard, 'title' | 'status' | 'userId' | 'queued'>,
  showUser: boolean,
): string {
  const parts = [card.title, card.status];
  if (card.queued) {
    parts.push(card.queued.position > 0 ? `position ${card.queued.position}` : 'starting');
    const { cap } = waitingWords(card, showUser);
    if (cap !== null) parts.push(cap);
  }
  return parts.join(', ');
}
