import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { LocalBackend } from '../../../src/containers/local/LocalBackend.js';
import { type ContractFixture, containerContract, newSessionId } from '../contract.js';

const backends: LocalBackend[] = [];
function make(namespace?: string): LocalBackend {
  const backend = new LocalBackend(namespace === undefined ? {} : { namespace });
  backends.push(backend);
  return backend;
}
afterAll(async () => {
  for (const b of backends) await b.close();
});

/** Real processes, so waits are real; each is bounded by its deadline. */
function localFixture(): ContractFixture {
  const backend = make();
  return {
    backend,
    image: 'host',
    restarted: () => make(),
    inNamespace: make,
    settle: (p) => p,
    eventually: async (check, deadlineMs) => {
      const until = Date.now() + deadlineMs;
      for (;;) {
        const value = await check();
        if (value !== undefined) return value;
        if (Date.now() >= until) throw new Error(`not within ${deadlineMs} ms`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    commands: {
      print: (text, code) => [
        'sh',
        '-c',
        'printf "%s\\n" "$1"; exit "$2"',
        'print',
        text,
        String(code),
      ],
      bytes: (n) => ['head', '-c', String(n), '/dev/zero'],
      long: (text) => ['sh', '-c', 'echo "$1"; sleep 600', 'long', text],
    },
  };
}

containerContract('local process', localFixture);

describe('LocalBackend specifics', () => {
  it('passes hostile argv through untouched (no shell splicing)', async () => {
    const backend = make();
    const sessionId = newSessionId('argv');
    const text = '$(touch /tmp/pwned-by-roundtable); `id` "quoted" \'single\'';
    const { handle } = await backend.start({
      sessionId,
      image: 'host',
      command: ['printf', '%s', text],
    });
    const chunks: string[] = [];
    const exit = await backend.attach({ handle, sessionId }, { onOutput: (c) => chunks.push(c) });
    expect(exit).toEqual({ exitCode: 0 });
    expect(chunks.join('')).toBe(text);
    expect(existsSync('/tmp/pwned-by-roundtable')).toBe(false);
  });

  it('reports a missing command as exit 127 with the shell’s message', async () => {
    const backend = make();
    const sessionId = newSessionId('missing');
    const { handle } = await backend.start({
      sessionId,
      image: 'host',
      command: ['roundtable-no-such-command'],
    });
    const chunks: string[] = [];
    const exit = await backend.attach({ handle, sessionId }, { onOutput: (c) => chunks.push(c) });
    expect(exit).toEqual({ exitCode: 127 });
    expect(chunks.join('')).toMatch(/not found/);
    expect((await backend.observe({ handle, sessionId })).marker).toEqual({ exitCode: 127 });
  });

  it('remove stops a running command and its children', async () => {
    const backend = make();
    const sessionId = newSessionId('kill');
    const ref = {
      handle: (await backend.start({ sessionId, image: 'host', command: ['sleep', '600'] })).handle,
      sessionId,
    };
    const owner = backend.attach(ref, { timeoutMs: 10_000 });
    await backend.remove(ref);
    await expect(owner).rejects.toMatchObject({ code: 'exec_lost' });
  });

  it('attach gives up at its deadline (on the injected clock) without stopping the run', async () => {
    const clock = new SimulatedClock();
    const backend = new LocalBackend({ clock });
    backends.push(backend);
    const sessionId = newSessionId('deadline');
    const { handle } = await backend.start({ sessionId, image: 'host', command: ['sleep', '600'] });
    const waiting = backend.attach({ handle, sessionId }, { timeoutMs: 60_000 });
    clock.increment(60_000);
    await expect(waiting).rejects.toMatchObject({ code: 'timeout' });
    expect((await backend.observe({ handle, sessionId })).presence).toBe('present');
  });
});
