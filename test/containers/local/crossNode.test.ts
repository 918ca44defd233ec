/**
 * Local runs seen by another node: one on this machine with a data
 * directory of its own observes the real process and files where the
 * handle says they are; one that cannot look (another boot or machine,
 * played by a process table with another boot token) says `unobservable`,
 * never `absent`, unless the run's own files say otherwise. Real processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLocalHandle, parseLocalHandle } from '../../../src/containers/local/localHandle.js';
import { hostProcessTable, type ProcessTable } from '../../../src/containers/local/processTable.js';
import { newSessionId } from '../contract.js';
import { isAlive, localFixture, until } from './localFixture.js';

const fx = localFixture();
const otherDataDir = mkdtempSync(join(tmpdir(), 'rt-local-other-'));
afterAll(() => rmSync(otherDataDir, { recursive: true, force: true }));

/** The host's processes as a node booted elsewhere would see them: its boot is not theirs. */
const anotherBoot: ProcessTable = { ...hostProcessTable(), bootToken: 'ffffffff' };

const start = async (tag: string, command: string[]) => {
  const sessionId = newSessionId(tag);
  const { handle } = await fx.backend.start({ sessionId, image: 'host', command });
  return { handle, sessionId };
};

describe('a local run observed by another node', () => {
  it('on this machine, from another data directory: present, followed, exited, removed where it is', async () => {
    const ref = await start('neighbour', [
      'sh',
      '-c',
      'echo one; read x < "$0"; echo two',
      '/dev/null',
    ]);
    expect(parseLocalHandle(ref.handle)?.dir).toBe(fx.backend.dir);
    const neighbour = fx.make({ baseDir: otherDataDir });
    expect(neighbour.dir).not.toBe(fx.backend.dir);
    const seen = await until(async () => {
      const o = await neighbour.observe(ref);
      return o.marker !== null ? o : undefined;
    }, 10_000);
    expect(seen).toMatchObject({ presence: 'present', marker: { exitCode: 0 } });
    expect((await neighbour.readOutput(ref)).text).toBe('one\ntwo\n');
    const chunks: string[] = [];
    const stop = new AbortController();
    neighbour.follow(ref, { signal: stop.signal, onOutput: (c) => chunks.push(c) });
    await until(() => (chunks.join('') === 'one\ntwo\n' ? true : undefined), 5_000);
    stop.abort();
    await neighbour.remove(ref);
    expect((await fx.backend.observe(ref)).presence).toBe('absent');
  });

  it('on this machine, a running run is present to the neighbour, and absent once its process is gone', async () => {
    const ref = await start('neighbour-kill', ['sh', '-c', 'echo x; sleep 600']);
    const neighbour = fx.make({ baseDir: otherDataDir });
    expect((await neighbour.observe(ref)).presence).toBe('present');
    const pid = parseLocalHandle(ref.handle)!.pid;
    process.kill(-pid, 'SIGKILL');
    await until(() => (isAlive(pid) ? undefined : true), 5_000);
    expect((await neighbour.observe(ref)).presence).toBe('absent');
    await neighbour.remove(ref);
  });

  it('from another boot: unobservable while it runs, and neither signalled nor deleted', async () => {
    const ref = await start('elsewhere', ['sh', '-c', 'echo x; sleep 600']);
    const pid = parseLocalHandle(ref.handle)!.pid;
    const far = fx.make({ baseDir: otherDataDir, processes: anotherBoot });
    expect(await far.observe(ref)).toEqual({
      presence: 'unobservable',
      containerStartedAt: null,
      marker: null,
    });
    // Its own directory too, when the files are not this node's (the same path on another machine).
    const samePath = fx.make({ processes: anotherBoot });
    const notHere = { ...ref, sessionId: newSessionId('gone') };
    notHere.handle = formatLocalHandle({
      ...parseLocalHandle(ref.handle)!,
      sessionId: notHere.sessionId,
    });
    expect((await samePath.observe(notHere)).presence).toBe('unobservable');
    // A handle written before handles named their directory, from another boot: unobservable too.
    const { dir: _dir, ...old } = parseLocalHandle(notHere.handle)!;
    expect((await samePath.observe({ ...notHere, handle: formatLocalHandle(old) })).presence).toBe(
      'unobservable',
    );
    await far.remove(ref);
    expect(isAlive(pid)).toBe(true);
    // Nor are its files touched: they are the run's, going on where it runs.
    expect((await fx.backend.observe(ref)).presence).toBe('present');
    await fx.backend.remove(ref);
    await until(() => (isAlive(pid) ? undefined : true), 5_000);
  });

  it('after a reboot of this machine, its own run with no marker is absent; with one, exited', async () => {
    const ref = await start('rebooted', ['sh', '-c', 'echo x; sleep 600']);
    const rebooted = fx.make({ processes: anotherBoot });
    expect((await rebooted.observe(ref)).presence).toBe('absent');
    const done = await start('rebooted-done', ['sh', '-c', 'exit 4']);
    await until(async () => ((await fx.backend.observe(done)).marker ? true : undefined), 5_000);
    expect(await rebooted.observe(done)).toMatchObject({
      presence: 'present',
      marker: { exitCode: 4 },
    });
    await fx.backend.remove(ref);
    await fx.backend.remove(done);
  });
});
