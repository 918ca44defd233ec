/// <reference lib="dom" />
/**
 * The admin's dashboard: the last hour per minute (queue depth, runners
 * held, wait p50/p95, runs ended and failed), from GET /api/admin/activity,
 * which computes it from the rows, so every node shows the same cluster.
 */
import { useCallback } from 'preact/hooks';
import type { BoardApi } from '../../client/boardApi.js';
import { TimeChart } from './TimeChart.js';
import { usePoll } from './usePoll.js';

/** How often the series is asked for again (its buckets are minutes). */
export const DASHBOARD_REFRESH_MS = 15_000;

const seconds = (v: number) => (v < 10 ? `${v.toFixed(1)} s` : `${Math.round(v)} s`);

export function Dashboard({ api }: { api: BoardApi }) {
  const fetchIt = useCallback(() => api.activity({ minutes: 60 }), [api]);
  const { value: s, error } = usePoll(fetchIt, DASHBOARD_REFRESH_MS);
  return (
    <section class="dashboard" aria-label="the last hour" data-loaded={s !== null}>
      {error && <p class="stale">dashboard: {error}</p>}
      {s && (
        <>
          <TimeChart
            name="queued"
            caption="Queue depth"
            t={s.t}
            lines={[{ label: 'queued', values: s.queued, color: '#3b6fd8' }]}
          />
          <TimeChart
            name="running"
            caption="Running"
            t={s.t}
            lines={[{ label: 'running', values: s.running, color: '#2a9d5c' }]}
          />
          <TimeChart
            name="wait"
            caption="Wait for a runner (p50, p95)"
            t={s.t}
            format={seconds}
            lines={[
              { label: 'p50', values: s.waitP50, color: '#c08a00' },
              { label: 'p95', values: s.waitP95, color: '#d2571d' },
            ]}
          />
          <TimeChart
            name="ended"
            caption="Runs ended per minute"
            t={s.t}
            lines={[
              { label: 'succeeded', values: s.succeeded, color: '#2a9d5c' },
              { label: 'failed', values: s.failed, color: '#d0303a' },
            ]}
          />
        </>
      )}
    </section>
  );
}
