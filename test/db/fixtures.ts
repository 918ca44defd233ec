/** Small builders shared by the store's suites. */

import { cancel, claim, finish } from '../../src/db/sessionTransitions.js';
import { createTaskWithSession } from '../../src/db/tasks.js';
import type { Db } from '../../src/db/transaction.js';

export const SPEC = { image: 'busybox:1.36', command: ['sh', '-c', 'echo "$1"', 'x'] } as const;

/** A manual clock: each call is one second after the previous. */
export function steppingClock(start = Date.parse('2026-07-14T10:00:00Z')): () => Date {
  let t = start;
  return () => {
    t += 1000;
    return new Date(t);
  };
}

/** Creates a task with its queued session for `userId`. */
export async function enqueue(db: Db, userId: string, now: Date, title = 'a task') {
  return createTaskWithSession(db, { userId, title, spec: SPEC, now });
}

/** How many rows each table holds. */
export async function rowCounts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ['tasks', 'sessions', 'session_events', 'user_caps'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

/** 14 July 2026 at `hms`, UTC. */
export const T = (hms: string) => new Date(`2026-07-14T${hms}Z`);

/** A session's life in one line: enqueued, maybe claimed, maybe ended (times of 14 July 2026, UTC). */
export type Plan = {
  user: string;
  enq: string;
  claim?: { at: string; owner: string };
  end?: { at: string; as: 'succeeded' | 'failed' | 'cancelled' };
};

/** Writes `plan`'s session through the store's own transitions. */
export async function build(db: Db, plan: Plan) {
  const { session } = await enqueue(db, plan.user, T(plan.enq));
  if (plan.claim) {
    await claim(db, {
      sessionId: session.id,
      epoch: 0,
      owner: plan.claim.owner,
      now: T(plan.claim.at),
    });
  }
  if (plan.end?.as === 'cancelled') {
    const expected = plan.claim ? { status: 'running', epoch: 1 } : { status: 'queued', epoch: 0 };
    await cancel(db, {
      sessionId: session.id,
      expected: expected as { status: 'queued' | 'running'; epoch: number },
      reason: 'cancelled by user',
      now: T(plan.end.at),
    });
  } else if (plan.end?.as === 'failed') {
    await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'failed',
      exitCode: 1,
      reason: 'exit_code',
      userRecoverable: false,
      now: T(plan.end.at),
    });
  } else if (plan.end) {
    await finish(db, {
      sessionId: session.id,
      epoch: 1,
      status: 'succeeded',
      exitCode: 0,
      now: T(plan.end.at),
    });
  }
}
