/// <reference lib="dom" />
/**
 * One clock for every time shown on the page ("running for 3m 5s"): a
 * single interval, and each component that shows a time re-renders its own
 * text node on the tick, never its card.
 */
import { useEffect, useState } from 'preact/hooks';

const listeners = new Set<(now: number) => void>();
let timer: ReturnType<typeof setInterval> | null = null;

function subscribe(listener: (now: number) => void): () => void {
  listeners.add(listener);
  if (timer === null) {
    timer = setInterval(() => {
      const now = Date.now();
      for (const l of listeners) l(now);
    }, 1000);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  };
}

/** The current time, advanced once a second while the component is mounted. */
export function useNow(): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => subscribe(setNow), []);
  return now;
}

/** "42s", "3m 5s", "2h 4m": how long since `iso`. */
export function since(iso: string, now: number): string {
  // Whole seconds: the tick is a second.
  return span(Math.floor((now - Date.parse(iso)) / 1000) * 1000);
}

/**
 * A span of `ms` as the page shows it: tenths under ten seconds when not
 * whole, then seconds, minutes, hours.
 *
 * @example
 * ```ts
 * span(1_800) // => '1.8s'
 * span(10_000) // => '10s'
 * span(60_000) // => '1m 0s'
 * span(185_000) // => '3m 5s'
 * span(86_400_000) // => '24h 0m'
 * span(-5) // => '0s'
 * ```
 */
export function span(ms: number): string {
  if (ms > 0 && ms < 10_000 && ms % 1000 !== 0) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/**
 * How long until `iso` (a running card's time limit), in whole seconds; once
 * past, the run is being stopped (its runner reads its output first).
 *
 * @example
 * ```ts
 * const at = Date.parse('2026-12-07T10:30:00Z')
 * left('2026-12-07T10:30:00Z', at - 185_500) // => '3m 5s left'
 * left('2026-12-07T10:30:00Z', at) // => 'stopping at its time limit'
 * left('2026-12-07T10:30:00Z', at + 4_000) // => 'stopping at its time limit'
 * ```
 */
export function left(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  return ms <= 0 ? 'stopping at its time limit' : `${span(Math.floor(ms / 1000) * 1000)} left`;
}

/** How long until `iso`, kept current. */
export function Left({ iso }: { iso: string }) {
  return <>{left(iso, useNow())}</>;
}

/** How long since `iso`, kept current. */
export function Elapsed({ iso }: { iso: string }) {
  return <>{since(iso, useNow())}</>;
}
