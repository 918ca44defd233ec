/// <reference lib="dom" />
/**
 * One card. It re-renders only when its card (a new object per patch) or
 * its estimate changes; its times tick in their own text nodes. Text goes in
 * as text only, so titles and output can never inject markup.
 */
import { Component } from 'preact';
import type { BoardCard } from '../../board/boardPort.js';
import { formatTimeLimit } from '../../board/formatTimeLimit.js';
import { formatStartsIn } from '../../client/estimateStart.js';
import { OutputBox } from './OutputBox.js';
import { Elapsed, Left } from './ticker.js';
import { cardLabel, waitingWords } from './waitingWords.js';

const limitWords = (ms: number | null | undefined) =>
  ms == null ? '' : `time limit ${formatTimeLimit(ms)}: `;

/** What a card's buttons do; each reports its own failure. */
export interface CardActions {
  cancel(taskId: string): void;
  retry(taskId: string): void;
}

interface Props {
  card: BoardCard;
  /** Milliseconds until it is expected to start (queued cards), rounded by the caller. */
  eta: number | undefined;
  showUser: boolean;
  actions: CardActions;
}

function Meta({ card, showUser }: { card: BoardCard; showUser: boolean }) {
  const attempt = card.attempt > 1 ? ` · attempt ${card.attempt}` : '';
  if (card.queued && card.queued.position === 0) {
    // Granted by the pool, row not yet claimed: it holds a runner, it is not in line.
    return <div class="meta starting">starting · got a runner{attempt}</div>;
  }
  if (card.queued) {
    const { lead, cap } = waitingWords(card, showUser);
    return (
      <>
        <div class="meta waiting">
          {lead} · position {card.queued.position} · <Elapsed iso={card.queued.since} />
          {attempt}
        </div>
        {cap !== null && <div class="meta capped">{cap}</div>}
      </>
    );
  }
  if (card.running) {
    const until = card.running.until;
    return (
      <div class="meta">
        running for <Elapsed iso={card.running.since} />
        {until != null && (
          // The time limit stops the run at `until`: say how long it has.
          <span
            class="limit"
            title={`${limitWords(card.timeLimitMs)}stopped at ${new Date(until).toLocaleTimeString()}`}
          >
            {' · '}
            <Left iso={until} />
          </span>
        )}
        {attempt}
      </div>
    );
  }
  if (card.column === 'done') {
    return (
      <div class="meta">
        {card.status} · exit {card.exitCode ?? '?'}
        {attempt}
      </div>
    );
  }
  if (card.status === 'cancelled') return <div class="meta cancelled">cancelled{attempt}</div>;
  return null;
}

export class CardView extends Component<Props> {
  override shouldComponentUpdate(next: Props): boolean {
    const p = this.props;
    return next.card !== p.card || next.eta !== p.eta || next.showUser !== p.showUser;
  }

  override render() {
    const { card, eta, showUser, actions } = this.props;
    const failure = card.failure;
    return (
      <article
        class="card"
        data-task-id={card.taskId}
        data-status={card.status}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: cards are the stops of arrow-key navigation (keyboard.ts)
        tabIndex={0}
        aria-label={cardLabel(card, showUser)}
      >
        <a class="title" href={`#/jobs/${encodeURIComponent(card.taskId)}`}>
          {card.title}
        </a>
        {showUser && <span class="user">{card.userId}</span>}
        <Meta card={card} showUser={showUser} />
        {eta !== undefined && card.queued !== null && card.queued.position > 0 && (
          <div class="meta eta">{formatStartsIn(eta)}</div>
        )}
        {card.previous && card.column !== 'failed' && card.column !== 'done' && (
          // A run the infrastructure ended is queued again at the head of its line: say why.
          <div class="why previous">
            attempt {card.previous.attempt} ended: {card.previous.reason}
          </div>
        )}
        {failure && (
          // Recoverable means the runner, not the command, failed (a replaced
          // container, a lost owner): the runtime queues it again by itself.
          <div class="why">
            failed: {failure.reason}
            {card.exitCode === null ? '' : ` · exit ${card.exitCode}`}
            {failure.recoverable ? ' (recoverable)' : ''}
          </div>
        )}
        {card.lastOutput.length > 0 && card.column !== 'queued' && (
          <OutputBox lines={card.lastOutput} />
        )}
        {(card.column === 'queued' || card.column === 'running') && (
          <button type="button" class="cancel" onClick={() => actions.cancel(card.taskId)}>
            cancel
          </button>
        )}
        {card.column === 'failed' && (
          <button type="button" class="retry" onClick={() => actions.retry(card.taskId)}>
            retry
          </button>
        )}
      </article>
    );
  }
}
