/**
 * Granting a slot when several nodes share one Postgres: the caps are
 * checked against the running rows themselves, inside the claiming
 * transaction, under one advisory lock so two nodes cannot both count
 * "one slot left" and both take it. Each node's pool is only a cache of
 * this; the row decides. Finishing never takes the lock: it only frees
 * capacity, so a stale count can only be too cautious.
 */
import { sql } from 'kysely';
import { z } from 'zod';
import { ADVISORY_LOCKS, LOCK_NAMESPACE } from './advisoryLocks.js';
import { compareAndSet } from './compareAndSet.js';
import { NotFoundError } from './errors.js';
import * as f from './inputs.js';
import { parseOrThrow } from './parseOrThrow.js';
import { type Session, toSession } from './rows.js';
import { type Db, inTransaction } from './transaction.js';

const claimWithinCapsInput = z.strictObject({
  owner: f.name,
  now: f.now,
  /** Most sessions running at once, over every node. */
  globalCap: f.maxRunning,
  /** A user's cap when `user_caps` has no row for them. */
  defaultUserCap: f.maxRunning,
  /** Claim this session (the pool's choice); omitted: the first eligible in dispatch order. */
  sessionId: f.sessionId.optional(),
});
export type ClaimWithinCapsInput = z.input<typeof claimWithinCapsInput>;

/** The outcome of a slot claim. Being at a cap is an answer, not an error. */
export type ClaimOutcome =
  | { kind: 'claimed'; session: Session }
  | { kind: 'at_global_cap'; running: number }
  | { kind: 'at_user_cap'; userId: string; running: number; cap: number }
  /** Nothing queued, or every queued session's user is at their cap. */
  | { kind: 'none_eligible' }
  /** The requested session is no longer queued (claimed, cancelled). */
  | { kind: 'not_queued'; session: Session };

/**
 * Claims one queued session for `owner` if the global cap and its user's cap
 * allow, in one transaction. Throws `ValidationError` on bad input and
 * `NotFoundError` for an unknown `sessionId`.
 */
export async function claimWithinCaps(db: Db, input: ClaimWithinCapsInput): Promise<ClaimOutcome> {
  const i = parseOrThrow(claimWithinCapsInput, input, '');
  return inTransaction(db, async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${ADVISORY_LOCKS.claimSlot})`.execute(
      tx,
    );
    let candidate: Session;
    if (i.sessionId !== undefined) {
      // One statement: the running total, the session, its user's running
      // count and cap. The total comes from a one-row subquery the session is
      // left-joined to, so an unknown session at the global cap still answers
      // at_global_cap, as the cap is checked first.
      const row = await tx
        .selectFrom(
          tx
            .selectFrom('sessions')
            .select(sql<string>`count(*)`.as('total'))
            .where('status', '=', 'running')
            .as('g'),
        )
        .leftJoin('sessions as s', (j) => j.on('s.id', '=', i.sessionId ?? ''))
        .selectAll('s')
        .select([
          'g.total',
          sql<
            string | null
          >`(SELECT count(*) FROM sessions r WHERE r.status = 'running' AND r.user_id = s.user_id)`.as(
            'user_running',
          ),
          sql<
            number | null
          >`(SELECT c.max_running FROM user_caps c WHERE c.user_id = s.user_id)`.as('user_cap'),
        ])
        .executeTakeFirstOrThrow();
      const running = Number(row.total);
      if (running >= i.globalCap) return { kind: 'at_global_cap', running };
      if (row.id === null) throw new NotFoundError('session', i.sessionId);
      const { total: _t, user_running, user_cap, ...session } = row;
      candidate = toSession(session as Parameters<typeof toSession>[0]);
      if (candidate.status !== 'queued') return { kind: 'not_queued', session: candidate };
      const cap = user_cap ?? i.defaultUserCap;
      const n = Number(user_running ?? 0);
      if (n >= cap) return { kind: 'at_user_cap', userId: candidate.userId, running: n, cap };
    } else {
      const total = await tx
        .selectFrom('sessions')
        .select(sql<string>`count(*)`.as('n'))
        .where('status', '=', 'running')
        .executeTakeFirstOrThrow();
      const running = Number(total.n);
      if (running >= i.globalCap) return { kind: 'at_global_cap', running };
      // Running rows are few (bounded by the global cap), so the per-user
      // counts are a small hash; the queue is walked in index order and the
      // LIMIT stops at the first eligible row.
      const row = await tx
        .with('r', (w) =>
          w
            .selectFrom('sessions')
            .select(['user_id', sql<number>`count(*)`.as('n')])
            .where('status', '=', 'running')
            .groupBy('user_id'),
        )
        .selectFrom('sessions as s')
        .leftJoin('user_caps as c', 'c.user_id', 's.user_id')
        .leftJoin('r', 'r.user_id', 's.user_id')
        .selectAll('s')
        .where('s.status', '=', 'queued')
        .where(sql<boolean>`coalesce(r.n, 0) < coalesce(c.max_running, ${i.defaultUserCap})`)
        .orderBy('s.enqueued_at')
        .orderBy('s.id')
        .limit(1)
        .executeTakeFirst();
      if (row === undefined) return { kind: 'none_eligible' };
      candidate = toSession(row);
    }

    const session = await compareAndSet(tx, {
      sessionId: candidate.id,
      expected: { status: 'queued', epoch: candidate.epoch },
      to: 'running',
      set: { owner_node: i.owner, epoch: candidate.epoch + 1, claimed_at: i.now },
      reason: 'claimed',
      node: i.owner,
      now: i.now,
    });
    return { kind: 'claimed', session };
  });
}
