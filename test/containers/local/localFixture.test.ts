/**
 * The local suites' teardown kills a run's process group only while it is
 * still the run's (`killRunGroup`): a pid another process took since is left
 * alone. Without that check, a teardown once SIGKILLed a Postgres backend
 * that had taken a dead run's pid, and the shared server restarted under
 * every other test.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { formatLocalHandle, parseLocalHandle } from '../../../src/containers/local/localHandle.js';
import { hostProcessTable } from '../../../src/containers/local/processTable.js';
import { newSessionId } from '../contract.js';
import { isAlive, killRunGroup, killStrays, localFixture, until } from './localFixture.js';

const fx = localFixture();

describe('killRunGroup', () => {
  it('kills a run that is still going, group and all', async () => {
    const sessionId = newSessionId('kill-run');
    const { handle } = await fx.backend.start({
      sessionId,
      image: 'host',
      command: ['sh', '-c', 'sleep 600 & sleep 600'],
    });
    const pid = parseLocalHandle(handle)?.pid ?? 0;
    expect(isAlive(-pid)).toBe(true);
    expect(killRunGroup(handle)).toBe(true);
    await until(() => (isAlive(-pid) ? undefined : true), 5_000);
    await fx.backend.remove({ sessionId, handle });
  });

  it('leaves alone a process that holds the pid now, and a handle of another boot', async () => {
    const sessionId = newSessionId('kill-reused');
    const { handle } = await fx.backend.start({ sessionId, image: 'host', command: ['true'] });
    const h = parseLocalHandle(handle);
    if (h === null) throw new Error(`not a local handle: ${handle}`);
    // Another process, leading its own group (as a Postgres backend does),
    // named by the run's handle as if it had taken the run's pid. Started a
    // clock tick later at least: start times are in 10 ms ticks, and a
    // process that takes a freed pid starts long after the one it replaces.
    await new Promise((r) => setTimeout(r, 50));
    const other = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    other.unref();
    const pid = other.pid ?? 0;
    fx.strays.push(pid);
    const taken = formatLocalHandle({ ...h, pid });
    expect(killRunGroup(taken)).toBe(false);
    expect(killRunGroup(formatLocalHandle({ ...h, pid, bootToken: 'f00d' }))).toBe(false);
    expect(isAlive(pid)).toBe(true);
    // The check can fail: named with its own start time, the group is killed.
    const own = formatLocalHandle({
      ...h,
      pid,
      startToken: hostProcessTable().identityOf(pid)?.startToken ?? '',
    });
    expect(killRunGroup(own)).toBe(true);
    await until(() => (isAlive(pid) ? undefined : true), 5_000);
    await fx.backend.remove({ sessionId, handle });
  });
});

describe('killStrays', () => {
  it('kills a stray that is still a child of this process, never another process', async () => {
    // A child that starts a grandchild: the grandchild's parent is the shell, not us.
    const child = spawn('sh', ['-c', 'sleep 600 & echo $!; wait'], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const line = await new Promise<string>((resolve) =>
      child.stdout.once('data', (b: Buffer) => resolve(b.toString())),
    );
    const grandchild = Number(line.trim());
    const pid = child.pid ?? 0;
    try {
      killStrays([grandchild]);
      expect(isAlive(grandchild)).toBe(true);
      killStrays([pid]);
      await until(
        () =>
          isAlive(pid) && child.exitCode === null && child.signalCode === null ? undefined : true,
        5_000,
      );
      expect(child.signalCode).toBe('SIGKILL');
    } finally {
      if (isAlive(-pid)) process.kill(-pid, 'SIGKILL');
    }
  });
});
