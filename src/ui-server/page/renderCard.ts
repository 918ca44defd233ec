/// <reference lib="dom" />
/**
 * Renders one card as DOM. Text goes in through `textContent` only, so task
 * titles and output can never inject markup.
 */
import type { BoardCard } from '../boardPort.js';

/** "42s", "3m 5s", "2h 4m": how long since `iso`. */
export function since(iso: string, now: number): string {
  const s = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function el(tag: string, className: string, text?: string): HTMLElement {
  const node = document.createElement(tag);
  node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A card element; `onRetry` is wired to the failed card's button. */
export function renderCard(card: BoardCard, now: number, onRetry: (taskId: string) => void) {
  const node = el('article', 'card');
  node.dataset.taskId = card.taskId;
  node.dataset.status = card.status;
  node.append(el('div', 'title', card.title));
  const attempt = card.attempt > 1 ? ` · attempt ${card.attempt}` : '';
  if (card.queued && card.queued.position === 0) {
    // Granted by the pool, row not yet claimed: it holds a runner, it is not in line.
    node.append(el('div', 'meta starting', `starting · got a runner${attempt}`));
  } else if (card.queued) {
    const wait = `waiting · position ${card.queued.position} · ${since(card.queued.since, now)}`;
    node.append(el('div', 'meta waiting', wait + attempt));
  } else if (card.running) {
    node.append(el('div', 'meta', `running for ${since(card.running.since, now)}${attempt}`));
  } else if (card.column === 'done') {
    node.append(el('div', 'meta', `${card.status} · exit ${card.exitCode ?? '?'}${attempt}`));
  } else if (card.status === 'cancelled') {
    node.append(el('div', 'meta cancelled', `cancelled${attempt}`));
  }
  if (card.previous && card.column !== 'failed' && card.column !== 'done') {
    // A run the infrastructure ended is queued again at the head of its line: say why.
    node.append(
      el('div', 'why previous', `attempt ${card.previous.attempt} ended: ${card.previous.reason}`),
    );
  }
  if (card.failure) {
    // Recoverable means the runner, not the command, failed (a replaced
    // container, a lost owner): the runtime queues it again by itself. A
    // command's own failure can still be retried by hand, so no "not".
    const exit = card.exitCode === null ? '' : ` · exit ${card.exitCode}`;
    const kind = card.failure.recoverable ? ' (recoverable)' : '';
    node.append(el('div', 'why', `failed: ${card.failure.reason}${exit}${kind}`));
  }
  if (card.lastOutput.length > 0 && card.column !== 'queued') {
    node.append(el('pre', 'output', card.lastOutput.join('\n')));
  }
  if (card.column === 'failed') {
    const button = el('button', 'retry', 'retry') as HTMLButtonElement;
    button.type = 'button';
    button.addEventListener('click', () => onRetry(card.taskId));
    node.append(button);
  }
  return node;
}
