/**
 * Which job an actor runs, for the inspector's rows: a runner's actor id is
 * its session's id, and the board knows that session's task, title and
 * user. Kept from the board's own change feed (one map write per card
 * change), seeded with the running cards, bounded: a runner that ended keeps
 * its name while the inspector still shows it, then ages out.
 */
import type { BoardCard, BoardSource } from '../../board/boardPort.js';
import type { ActorJob } from './inspectorProtocol.js';

export interface JobLookup {
  /** The job of the actor with this id (a runner's id is its session's), if the board knows it. */
  jobOf(actorId: string): ActorJob | undefined;
}

export class JobIndex implements JobLookup {
  private readonly bySession = new Map<string, ActorJob>();
  private readonly unsubscribe: () => void;
  /** Bumped when a session is learnt: the hub sends the tree again. */
  version = 0;

  constructor(
    source: BoardSource,
    private readonly onLearnt: () => void,
    private readonly max = 10_000,
  ) {
    for (const card of source.cards(null)) if (card.column === 'running') this.learn(card);
    // Passive: a runner is this node's, and its card comes from this node's own ticks.
    this.unsubscribe = source.subscribe(
      (card) => {
        if (card.column === 'running' && this.learn(card)) this.onLearnt();
      },
      { passive: true },
    );
  }

  jobOf(actorId: string): ActorJob | undefined {
    return this.bySession.get(actorId);
  }

  close(): void {
    this.unsubscribe();
  }

  /** Returns true when the session was new. */
  private learn(card: BoardCard): boolean {
    if (this.bySession.has(card.sessionId)) return false;
    this.bySession.set(card.sessionId, {
      taskId: card.taskId,
      title: card.title,
      userId: card.userId,
    });
    // Oldest out: the inspector keeps a few hundred dead actors, not thousands.
    if (this.bySession.size > this.max) {
      const oldest = this.bySession.keys().next().value;
      if (oldest !== undefined) this.bySession.delete(oldest);
    }
    this.version += 1;
    return true;
  }
}
