/**
 * What a node tells its terminal as it runs: a line per card that changes
 * column or status, and the supervisor's restarts, so that the log tells the
 * board's story without a browser.
 */
import type { Runtime, RuntimeCard } from '../actors/runtimeTypes.js';
import type { CommandContext } from './commandContext.js';

/**
 * One info line per card that changes column or status, or starts a new
 * attempt (a re-queue granted again in the same tick stays `running`: the
 * record says which attempt and why the last one ended): the terminal tells
 * the board's story.
 */
export function logCards(runtime: Runtime, ctx: Pick<CommandContext, 'logger'>): void {
  const last = new Map<string, { state: string; attempt: number }>();
  for (const card of runtime.cards(null))
    last.set(card.taskId, { state: stateOf(card), attempt: card.attempt });
  const log = ctx.logger.child({ component: 'board' });
  // Passive: a log, not a screen (the node is not watched for it).
  runtime.subscribe(
    (card) => {
      const now = stateOf(card);
      const before = last.get(card.taskId);
      const newAttempt = before !== undefined && card.attempt !== before.attempt;
      if (before?.state === now && !newAttempt) return;
      last.set(card.taskId, { state: now, attempt: card.attempt });
      const previous = newAttempt ? (card.previous ?? null) : null;
      const why = previous ? ` after ${previous.reason}` : '';
      log.info(
        {
          task: card.taskId,
          user: card.userId,
          attempt: card.attempt,
          ...(card.queued ? { position: card.queued.position } : {}),
          ...(card.failure ? { reason: card.failure.reason } : {}),
          ...(card.exitCode !== null ? { exit: card.exitCode } : {}),
          ...(previous ? { previous } : {}),
        },
        `${card.title}: ${before?.state ?? 'new'} → ${now}${newAttempt ? ` (attempt ${card.attempt}${why})` : ''}`,
      );
    },
    {
      passive: true,
      // Past retention: the card left the board, and the log's memory of it goes too.
      onRemoved: (taskIds) => {
        for (const id of taskIds) last.delete(id);
      },
    },
  );
}

function stateOf(card: RuntimeCard): string {
  return card.status === 'queued' ? 'queued' : card.status;
}

export function logSupervision(runtime: Runtime, ctx: CommandContext): void {
  const log = ctx.logger.child({ component: 'supervisor' });
  runtime.onSupervisorEvent((event) => {
    if (event.type === 'roundtable.child.restarting') log.warn(event, 'restarting a child');
    else if (event.type === 'roundtable.supervisor.intensity_reached')
      log.error(event, 'restart intensity reached');
    else log.debug(event, event.type);
  });
}
