import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
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

/** A stand-in Docker engine on a unix socket that answers `GET /info` with `swarm`. */
async function fakeEngine(swarm: object): Promise<{ host: string; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'rt-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const server = createServer((req, res) => {
    res.writeHead(req.url?.endsWith('/info') ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ Swarm: swarm }));
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    host: `unix://${socketPath}`,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('openBackend with no backend named', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rt-open-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('runs local processes when no engine answers, and says so', async () => {
    const { config } = resolveConfig({
      env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock', ROUNDTABLE_DATA_DIR: dataDir },
    });
    const opened = await openBackend(config, 'default');
    try {
      expect(opened.backend.kind).toBe('local');
      expect(opened.backend.adoptable).toBe(true);
      expect(opened.decision.name).toBe('local');
      expect(opened.decision.reason).toMatch(
        /^auto: no Docker engine answered at unix:\/\/\/nonexistent\/docker\.sock \(.+\): local processes$/,
      );
      expect(opened.description).toContain(`files in ${join(dataDir, 'runs')}`);
      expect(opened.description).toContain(`as OS user ${userInfo().username}`);
    } finally {
      opened.close();
    }
  });

  it('runs on plain Docker when the engine answers outside Swarm', async () => {
    const engine = await fakeEngine({ LocalNodeState: 'inactive' });
    try {
      const { config } = resolveConfig({ env: { DOCKER_HOST: engine.host } });
      const opened = await openBackend(config, 'default');
      expect(opened.backend.kind).toBe('docker');
      expect(opened.decision.reason).toBe(
        `auto: the Docker engine at ${engine.host} answers, outside Swarm: plain Docker`,
      );
    } finally {
      await engine.close();
    }
  });

  it('refuses --backend swarm on an engine that is not a manager, naming the way out', async () => {
    const engine = await fakeEngine({ LocalNodeState: 'inactive' });
    try {
      const { config } = resolveConfig({
        env: { DOCKER_HOST: engine.host },
        flags: { '--backend': 'swarm' },
      });
      await expect(openBackend(config, '--backend')).rejects.toThrow(
        /not a swarm manager.*--backend docker/,
      );
    } finally {
      await engine.close();
    }
  });

  it('refuses a named Docker backend whose engine does not answer', async () => {
    const { config } = resolveConfig({
      env: { DOCKER_HOST: 'unix:///nonexistent/docker.sock' },
      flags: { '--backend': 'docker' },
    });
    await expect(openBackend(config, '--backend')).rejects.toThrow(
      /cannot reach the Docker engine/,
    );
  });

  const dockerHost = process.env.DOCKER_HOST;
  const needEngine = !dockerHost && process.env.CI !== 'true';
  it.skipIf(needEngine)(
    `picks Swarm on a real Swarm manager, and plain Docker when named${needEngine ? ' (skipped: DOCKER_HOST is not set)' : ''}`,
    async () => {
      expect(dockerHost, 'CI=true needs DOCKER_HOST').toBeDefined();
      const { config } = resolveConfig({ env: { DOCKER_HOST: dockerHost } });
      const auto = await openBackend(config, 'default');
      expect(auto.backend.kind).toBe('swarm');
      expect(auto.decision.reason).toBe(
        `auto: the Docker engine at ${dockerHost} is a Swarm manager`,
      );
      const named = await openBackend(
        resolveConfig({ env: { DOCKER_HOST: dockerHost, ROUNDTABLE_BACKEND: 'docker' } }).config,
        'ROUNDTABLE_BACKEND',
      );
      expect(named.backend.kind).toBe('docker');
      expect(named.decision.reason).toBe('docker, as ROUNDTABLE_BACKEND says');
    },
  );
});
