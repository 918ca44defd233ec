import { describe, expect, it, vi } from 'vitest';
import { trackedClock } from '../../src/cli/openBackend.js';

describe('trackedClock', () => {
  it('forgets fired and cleared timers, and clearAll cancels the rest', async () => {
    vi.useFakeTimers();
    try {
      const clock = trackedClock();
      const fired: string[] = [];
      clock.setTimeout(() => fired.push('a'), 10);
      const b = clock.setTimeout(() => fired.push('b'), 20);
      clock.setTimeout(() => fired.push('c'), 30);
      expect(clock.pending()).toBe(3);
      vi.advanceTimersByTime(10);
      expect(clock.pending()).toBe(2);
      clock.clearTimeout(b);
      expect(clock.pending()).toBe(1);
      clock.clearAll();
      vi.advanceTimersByTime(100);
      expect(fired).toEqual(['a']);
      expect(clock.pending()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
