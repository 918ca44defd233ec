/**
 * `LocalBackend.follow`: an adopted run's output followed from its file by a
 * backend that did not start it (a restarted node), with real processes.
 * The commands wait on gate files this test creates, so each line is known
 * to be written after the one before was seen: no sleeps as synchronization.
 */
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunRef } from '../../../src/containers/ContainerBackend.js';
import { startOfTail } from '../../../src/containers/local/outputFollower.js';
import { newSessionId } from '../contract.js';
import { localFixture, until } from './localFixture.js';

const gates = mkdtempSync(join(tmpdir(), 'rt-follow-gates-'));
/** `sh -c` text that waits until the gate file `name` exists. */
const waitFor = (name: string) => `while [ ! -e ${join(gates, name)} ]; do sleep 0.02; done`;
const open = (name: string) => writeFileSync(join(gates, name), '');
afterAll(() => rmSync(gates, { recursive: true, force: true }));

describe('LocalBackend.follow', () => {
  const fx = localFixture();

  const follow = (ref: RunRef, options: { fromByte?: number; tailBytes?: number } = {}) => {
    const chunks: string[] = [];
    const abort = new AbortController();
    let ends = 0;
    fx.make().follow(ref, {
      ...options,
      signal: abort.signal,
      onOutput: (c) => chunks.push(c),
      onEnd: () => {
        ends += 1;
      },
    });
    return { text: () => chunks.join(''), stop: () => abort.abort(), ends: () => ends };
  };

  it('a restarted node follows the run: the lines written so far, then each as it comes, the rest on stop', async () => {
    const tag = newSessionId('x').slice(-6);
    const sessionId = newSessionId('follow');
    const { handle } = await fx.backend.start({
      sessionId,
      image: 'host',
      command: [
        'sh',
        '-c',
        `echo one; echo two; ${waitFor(`${tag}-a`)}; echo three; ${waitFor(`${tag}-b`)}; echo four`,
      ],
    });
    const ref = { sessionId, handle };
    await until(
      async () =>
        (await fx.backend.readOutput(ref).catch(() => null))?.text === 'one\ntwo\n'
          ? true
          : undefined,
      10_000,
    );
    fx.backend.close(); // the node that started it is gone
    const f = follow(ref);
    await until(() => (f.text() === 'one\ntwo\n' ? true : undefined), 10_000);
    open(`${tag}-a`);
    await until(() => (f.text() === 'one\ntwo\nthree\n' ? true : undefined), 10_000);
    open(`${tag}-b`);
    const next = fx.make();
    await until(async () => ((await next.observe(ref)).marker !== null ? true : undefined), 10_000);
    // Stopped on the marker: whatever the poll had not read yet is read now.
    f.stop();
    expect(f.text()).toBe('one\ntwo\nthree\nfour\n');
    // The file is local: the read to the end, and so the end, come within the stop.
    expect(f.ends()).toBe(1);
    await next.remove(ref);
  });

  it('from a byte: what this node showed already is not shown again', async () => {
    const sessionId = newSessionId('from');
    const { handle } = await fx.backend.start({
      sessionId,
      image: 'host',
      command: ['sh', '-c', 'echo héllo; echo wörld'],
    });
    const ref = { sessionId, handle };
    await fx.backend.attach(ref);
    const f = follow(ref, { fromByte: Buffer.byteLength('héllo\n') });
    f.stop();
    expect(f.text()).toBe('wörld\n');
    await fx.backend.remove(ref);
  });

  it('a long output: only its tail, from the first whole line in it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rt-tail-'));
    const path = join(dir, 'out');
    const lines = Array.from({ length: 100 }, (_, i) => `line ${String(i).padStart(3, '0')}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    const size = Buffer.byteLength(`${lines.join('\n')}\n`);
    // Each line is 9 bytes: the last 40 bytes start mid-line; the tail starts at the next one.
    const from = startOfTail(path, 40);
    expect(from).toBe(size - 36);
    // A cut that falls on a line's start keeps that line.
    expect(startOfTail(path, 36)).toBe(size - 36);
    expect(startOfTail(path, size)).toBe(0);
    expect(startOfTail(join(dir, 'missing'), 10)).toBe(0);
    // No line break in the window: the cut point itself.
    appendFileSync(path, 'x'.repeat(50));
    expect(startOfTail(path, 20)).toBe(size + 30);
    rmSync(dir, { recursive: true, force: true });
  });

  it('never throws: a handle that is not a local one, or an aborted signal, follows nothing', () => {
    const abort = new AbortController();
    const seen: string[] = [];
    fx.backend.follow(
      { sessionId: 'ses_x', handle: 'rt-ses_x' },
      { signal: abort.signal, onOutput: (c) => seen.push(c) },
    );
    abort.abort();
    expect(seen).toEqual([]);
  });
});
