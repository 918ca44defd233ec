/// <reference lib="dom" />
/**
 * A value fetched now and again every `everyMs` while the component is
 * mounted: the admin view's series and nodes. A failed fetch keeps the last
 * value and says why (the view shows it next to the stale value), and a
 * fetch still out when the next is due is not doubled.
 */
import { useEffect, useState } from 'preact/hooks';

export interface Polled<T> {
  value: T | null;
  /** The last fetch's failure, null once one succeeds again. */
  error: string | null;
}

export function usePoll<T>(fetchIt: () => Promise<T>, everyMs: number): Polled<T> {
  const [state, setState] = useState<Polled<T>>({ value: null, error: null });
  useEffect(() => {
    let stopped = false;
    let out = false;
    const poll = async () => {
      if (out) return;
      out = true;
      try {
        const value = await fetchIt();
        if (!stopped) setState({ value, error: null });
      } catch (err) {
        if (!stopped) setState((s) => ({ value: s.value, error: (err as Error).message }));
      } finally {
        out = false;
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), everyMs);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [fetchIt, everyMs]);
  return state;
}
