/// <reference lib="dom" />
/**
 * The estimates shown on queued cards, from the board's cards, the pool
 * (caps, runners held) and the server's recent run durations (`/api/stats`).
 */
import { useMemo } from 'preact/hooks';
import type { PoolSnapshot } from '../../board/boardPort.js';
import type { BoardContext } from '../../client/boardStore.js';
import { estimateInputFrom } from '../../client/estimateInput.js';
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
    const raw = estimateStarts(
      estimateInputFrom(Object.values(ctx.cards), pool, recentDurationsMs, Date.now()),
    );
    for (const [id, ms] of Object.entries(raw)) raw[id] = Math.round(ms / ROUND_MS) * ROUND_MS;
    return raw;
  }, [ctx.cards, pool, recentDurationsMs]);
}
