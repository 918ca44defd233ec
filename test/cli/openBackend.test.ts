import { describe, expect, it, vi } from 'vitest';
import { openBackend, trackedClock } from '../../src/cli/openBackend.js';
import { resolveConfig } from '../../src/cli/resolveConfig.js';

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

describe('openBackend', () => {
  it('builds the backend in the configured namespace', async () => {
    const { config } = resolveConfig({
      env: { ROUNDTABLE_NAMESPACE: 'team-a' },
      flags: { '--backend': 'simulated' },
    });
    const opened = await openBackend(config);
    try {
      expect(opened.backend.namespace).toBe('team-a');
    } finally {
      opened.close();
    }
  });

  const dockerHost = process.env.DOCKER_HOST;
  // The Swarm branch only checks the engine (docker info); it starts nothing.
  it.skipIf(!dockerHost)(
    `passes the namespace to the Swarm backend${dockerHost ? '' : ' (skipped: DOCKER_HOST is not set)'}`,
    async () => {
      const { config } = resolveConfig({
        env: { DOCKER_HOST: dockerHost, ROUNDTABLE_NAMESPACE: 'team-b' },
        flags: { '--backend': 'swarm' },
      });
      const opened = await openBackend(config);
      expect(opened.backend.kind).toBe('swarm');
      expect(opened.backend.namespace).toBe('team-b');
      expect(opened.description).toContain('namespace team-b');
    },
  );

  it('uses the "default" namespace when none is set', async () => {
    const opened = await openBackend(resolveConfig({ flags: { '--backend': 'simulated' } }).config);
    try {
      expect(opened.backend.namespace).toBe('default');
    } finally {
      opened.close();
    }
  });
});
