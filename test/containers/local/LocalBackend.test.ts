import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { RunRef } from '../../../src/containers/ContainerBackend.js';
import { parseLocalHandle } from '../../../src/containers/local/localHandle.js';
import { parseProcStat } from '../../../src/containers/local/processTable.js';
import { decide } from '../../../src/machines/adoptPolicy.js';
import { containerContract, newSessionId } from '../contract.js';
import { canChoosePids, isAlive, localFixture, spawnWithPid, until } from './localFixture.js';

containerContract('local process', localFixture);

const BUDGET_MS = 15 * 60 * 1000;

function statOf(pid: number) {
  const line = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ');
  return { pgrp: Number(fields[2]), session: Number(fields[3]), parsed: parseProcStat(line) };
}

describe('LocalBackend specifics', () => {
  const fx = localFixture();
  const start = async (tag: string, command: string[], backend = fx.backend) => {
    const sessionId = newSessionId(tag);
    const { handle, startedAt } = await backend.start({ sessionId, image: 'host', command });
    return { ref: { handle, sessionId }, startedAt };
  };

  it('passes hostile argv through untouched (no shell splicing)', async () => {
    const text = '$(touch /tmp/pwned-by-roundtable); `id` "quoted" \'single\'';
    const { ref } = await start('argv', ['printf', '%s', text]);
    const chunks: string[] = [];
    const exit = await fx.backend.attach(ref, { onOutput: (c) => chunks.push(c) });
    expect(exit).toEqual({ exitCode: 0 });
    expect(chunks.join('')).toBe(text);
    expect(existsSync('/tmp/pwned-by-roundtable')).toBe(false);
    await fx.backend.remove(ref);
  });

  it('reports a missing command as exit 127 with the shell’s message', async () => {
    const { ref } = await start('missing', ['roundtable-no-such-command']);
    const chunks: string[] = [];
    const exit = await fx.backend.attach(ref, { onOutput: (c) => chunks.push(c) });
    expect(exit).toEqual({ exitCode: 127 });
    expect(chunks.join('')).toMatch(/not found/);
    expect((await fx.backend.observe(ref)).marker).toEqual({ exitCode: 127 });
    await fx.backend.remove(ref);
  });

  it('runs each command detached: its own session and process group, in its work directory', async () => {
    const { ref } = await start('detached', ['sh', '-c', 'pwd; sleep 600']);
    const h = parseLocalHandle(ref.handle);
    expect(h).not.toBeNull();
    const { pgrp, session, parsed } = statOf(h!.pid);
    expect(pgrp).toBe(h!.pid);
    expect(session).toBe(h!.pid);
    expect(session).not.toBe(statOf(process.pid).session);
    expect(parsed?.startTicks).toBe(h!.startToken);
    const out = await until(
      async () => (await fx.backend.readOutput(ref).catch(() => null))?.text || undefined,
      5_000,
    );
    expect(out.trim()).toBe(`${fx.backend.runDir(ref.sessionId)}/work`);
    await fx.backend.remove(ref);
  });

  it('remove stops the command and its children, and the owner’s attach fails exec_lost', async () => {
    const { ref } = await start('kill', ['sh', '-c', 'sleep 600 & echo "$!"; wait']);
    // Settled into a value at once: it rejects while remove is still waiting for the group.
    const owner = fx.backend.attach(ref, { timeoutMs: 10_000 }).then(
      () => null,
      (error: unknown) => error,
    );
    const child = Number(
      await until(
        async () => (await fx.backend.readOutput(ref).catch(() => null))?.text.trim() || undefined,
        5_000,
      ),
    );
    expect(isAlive(child)).toBe(true);
    await fx.backend.remove(ref);
    expect(await owner).toMatchObject({ code: 'exec_lost' });
    await until(() => (isAlive(child) ? undefined : true), 5_000);
    expect(existsSync(fx.backend.runDir(ref.sessionId))).toBe(false);
  });

  it('remove sends SIGTERM, then SIGKILL after the grace to a command that ignores it', async () => {
    const backend = fx.make({ stopGraceMs: 300 });
    const { ref } = await start(
      'stubborn',
      ['sh', '-c', 'trap "echo term" TERM; echo up; while :; do sleep 0.05; done'],
      backend,
    );
    await until(
      async () =>
        (await backend.readOutput(ref).catch(() => null))?.text === 'up\n' ? true : undefined,
      5_000,
    );
    const pid = parseLocalHandle(ref.handle)!.pid;
    const began = Date.now();
    await backend.remove(ref);
    expect(Date.now() - began).toBeGreaterThanOrEqual(300);
    expect(isAlive(pid)).toBe(false);
  });

  it('a run outlives its backend: a new one over the same directory observes it, then its marker', async () => {
    const { ref, startedAt } = await start('outlive', [
      'sh',
      '-c',
      'echo before; sleep 1; echo after; exit 5',
    ]);
    fx.backend.close();
    const after = fx.make();
    const running = await after.observe(ref);
    expect(running.presence).toBe('present');
    expect(decide(running.containerStartedAt, startedAt, 0, BUDGET_MS)).toEqual({ kind: 'poll' });
    const done = await until(async () => {
      const o = await after.observe(ref);
      return o.marker ? o : undefined;
    }, 10_000);
    expect(done).toMatchObject({ presence: 'present', marker: { exitCode: 5 } });
    expect((await after.readOutput(ref)).text).toBe('before\nafter\n');
    await after.remove(ref);
  });

  it('a pid now held by another process is replaced, and remove never signals that process', async () => {
    const { ref, startedAt } = await start('reused', ['sh', '-c', 'exit 0']);
    await until(async () => ((await fx.backend.observe(ref)).marker ? true : undefined), 5_000);
    // The run's own marker would say "exited"; what is left is a pid and a start time.
    const h = parseLocalHandle(ref.handle)!;
    const other = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
    other.unref();
    fx.strays.push(other.pid!);
    const foreign = {
      ...ref,
      handle: `rt-${ref.sessionId}:${other.pid}.${h.startToken}.${h.bootToken}`,
    };
    const dir = fx.backend.runDir(ref.sessionId);
    rmSync(`${dir}/roundtable-exit-${ref.sessionId}`);
    const seen = await fx.backend.observe(foreign);
    expect(seen.presence).toBe('present');
    expect(seen.marker).toBeNull();
    expect(decide(seen.containerStartedAt, startedAt, 0, BUDGET_MS)).toEqual({
      kind: 'give_up',
      reason: 'container_replaced',
    });
    await fx.backend.remove(foreign);
    expect(isAlive(other.pid!)).toBe(true);
    process.kill(other.pid!, 'SIGKILL');
  });

  it.runIf(canChoosePids())(
    'a pid really reused by the kernel is replaced (root: ns_last_pid)',
    async () => {
      // Any process or thread on the machine may take the freed pid before
      // the stand-in does (CI ran this beside a whole test suite and a
      // Docker engine once: every retry of one pid lost): then another
      // run's pid is tried, so the kernel's reuse is still what is tested.
      let reused: { ref: RunRef; startedAt: Date; pid: number } | undefined;
      for (let round = 0; round < 5 && reused === undefined; round += 1) {
        const run = await start(`kernel-reuse-${round}`, ['sh', '-c', 'echo hi; sleep 600']);
        const pid = parseLocalHandle(run.ref.handle)!.pid;
        process.kill(-pid, 'SIGKILL');
        await until(() => (isAlive(-pid) ? undefined : true), 5_000);
        if ((await spawnWithPid(pid, fx.strays)) === pid) reused = { ...run, pid };
        else await fx.backend.remove(run.ref);
      }
      if (reused === undefined)
        throw new Error('no freed pid was handed to a new process in 5 runs');
      const { ref, startedAt, pid } = reused;
      const seen = await fx.make().observe(ref);
      expect(seen).toMatchObject({ presence: 'present', marker: null });
      expect(decide(seen.containerStartedAt, startedAt, 0, BUDGET_MS).kind).toBe('give_up');
      await fx.backend.remove(ref);
      expect(isAlive(pid)).toBe(true);
    },
  );

  it('a dead pid with no marker is absent; a handle of another backend is absent', async () => {
    const { ref } = await start('absent', ['sh', '-c', 'echo x; sleep 600']);
    const pid = parseLocalHandle(ref.handle)!.pid;
    process.kill(-pid, 'SIGKILL');
    await until(() => (isAlive(pid) ? undefined : true), 5_000);
    expect((await fx.make().observe(ref)).presence).toBe('absent');
    expect((await fx.backend.observe({ ...ref, handle: `rt-${ref.sessionId}` })).presence).toBe(
      'absent',
    );
    await fx.backend.remove(ref);
  });

  it('refuses a second start of the same session as conflict', async () => {
    const { ref } = await start('twice', ['sleep', '600']);
    await expect(
      fx.make().start({ sessionId: ref.sessionId, image: 'host', command: ['echo'] }),
    ).rejects.toMatchObject({ code: 'conflict' });
    await fx.backend.remove(ref);
  });

  it('attach gives up at its deadline (on the injected clock) without stopping the run', async () => {
    const clock = new SimulatedClock();
    const backend = fx.make({ clock });
    const { ref } = await start('deadline', ['sleep', '600'], backend);
    const waiting = backend.attach(ref, { timeoutMs: 60_000 });
    clock.increment(60_000);
    await expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    expect((await backend.observe(ref)).presence).toBe('present');
    await fx.make().remove(ref);
  });
});
