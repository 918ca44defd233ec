/// <reference lib="dom" />
/**
 * The estimates shown on queued cards, from the board's cards, the pool
 * (caps, runners held) and the server's recent run durations (`/api/stats`).
 */
import { useMemo } from 'preact/hooks';
import type { PoolSnapshot } from '../../board/boardPort.js';
import type { BoardContext } from '../../client/boardStore.js';
import { estimateStarts } from '../../client/estimateStart.js';

/** Rounded so a card re-renders when its estimate moves by 10 s, not on every render. */
const ROUND_MS = 10_000;

export function useEstimates(
  ctx: BoardContext,
  pool: PoolSnapshot | null,
  recentDurationsMs: readonly number[],
): Record<string, number> {
  return useMemo(() => {
    if (pool === null) return {};
    const cards = Object.values(ctx.cards);
    const running = cards
      .filter((c) => c.running !== null)
      .map((c) => ({ userId: c.userId, since: Date.parse(c.running!.since) }));
    const queued = cards
      .filter((c) => c.queued !== null)
      .map((c) => ({ taskId: c.taskId, userId: c.userId, position: c.queued!.position }));
    const raw = estimateStarts({
      now: Date.now(),
      maxRunning: pool.maxRunning,
      userCaps: Object.fromEntries(pool.users.map((u) => [u.userId, u.maxRunning])),
      running,
      runningUnseen: Math.max(0, pool.running - running.length),
      queued,
      recentDurations: recentDurationsMs,
    });
    for (const id of Object.keys(raw)) raw[id] = Math.round(raw[id]! / ROUND_MS) * ROUND_MS;
    return raw;
  }, [ctx.cards, pool, recentDurationsMs]);
}
