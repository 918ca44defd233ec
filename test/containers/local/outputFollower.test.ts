/**
 * `OutputFollower` (src/containers/local/outputFollower.ts) on files written
 * ahead of it, on a virtual clock: a drain gives the node's thread back
 * after a slice, and a reader far behind skips to the file's last lines,
 * marked, so a run writing faster than the node shows it (`yes | head -c
 * 200M`) never holds the thread for seconds (it held every other user's
 * request 5 s and more).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DRAIN_SLICE_BYTES,
  OutputFollower,
  SKIP_BEHIND_BYTES,
  SKIP_TO_TAIL_BYTES,
} from '../../../src/containers/local/outputFollower.js';
import { TestClock } from '../../../src/testing/TestClock.js';

const dir = mkdtempSync(join(tmpdir(), 'rt-follower-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file of numbered lines (with a two-byte character in each) of about `bytes`. */
function outputOf(name: string, bytes: number): { path: string; text: string } {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i += 1) {
    const line = `line ${i} é ${'x'.repeat(i % 97)}\n`;
    lines.push(line);
    size += Buffer.byteLength(line);
  }
  const text = lines.join('');
  const path = join(dir, name);
  writeFileSync(path, text);
  return { path, text };
}

function follower(path: string) {
  const clock = new TestClock();
  const chunks: string[] = [];
  // A poll that never comes in these tests: only drains and their slices read.
  const f = new OutputFollower(path, (c) => chunks.push(c), clock, 3_600_000);
  const bytes = () => Buffer.byteLength(chunks.join(''));
  /** Fires the slices due now, one at a time, as the loop's turns would. */
  const turns = () => {
    let n = 0;
    while (clock.fireNext(clock.now())) n += 1;
    return n;
  };
  return { f, clock, chunks, bytes, turns, text: () => chunks.join('') };
}

describe('OutputFollower', () => {
  it('a drain passes on one slice and gives the thread back; the next turns pass on the rest, in order, once', () => {
    const { path, text } = outputOf('five', 5 * 1024 * 1024);
    const r = follower(path);
    r.f.drain();
    expect(r.bytes()).toBeLessThanOrEqual(DRAIN_SLICE_BYTES);
    expect(r.bytes()).toBeGreaterThan(0);
    // A watch event meanwhile does not start a second reader.
    r.f.drain();
    expect(r.bytes()).toBeLessThanOrEqual(DRAIN_SLICE_BYTES);
    expect(r.turns()).toBeGreaterThanOrEqual(4);
    expect(r.text()).toBe(text);
    r.f.close();
    expect(r.clock.pending()).toBe(0);
  });

  it('a reader far behind skips to the last whole lines, marked, and reads no more than the window', () => {
    const { path, text } = outputOf('far', SKIP_BEHIND_BYTES + 3 * 1024 * 1024);
    const r = follower(path);
    r.f.drain();
    r.turns();
    const shown = r.text();
    const [mark, ...rest] = shown.split('\n');
    const skipped = Buffer.byteLength(text) - Buffer.byteLength(rest.join('\n'));
    expect(mark).toBe(
      `[roundtable: live output skipped ${skipped} bytes, written faster than they could be shown]`,
    );
    // The file's end, from the start of a line, within the window.
    expect(text.endsWith(rest.join('\n'))).toBe(true);
    expect(rest[0]).toMatch(/^line \d+ é x*$/);
    expect(Buffer.byteLength(rest.join('\n'))).toBeLessThanOrEqual(SKIP_TO_TAIL_BYTES);
    r.f.close();
  });

  it('a stop far behind (a run that wrote faster and ended) reads the window only, at once; near, everything', () => {
    const far = outputOf('stop-far', SKIP_BEHIND_BYTES * 2);
    const r = follower(far.path);
    r.f.finish();
    expect(r.chunks[0]).toMatch(/^\[roundtable: live output skipped \d+ bytes/);
    expect(r.bytes()).toBeLessThanOrEqual(SKIP_TO_TAIL_BYTES + 200);
    expect(far.text.endsWith(r.text().slice(r.text().indexOf('\n') + 1))).toBe(true);
    expect(r.clock.pending()).toBe(0);

    const near = outputOf('stop-near', 3 * DRAIN_SLICE_BYTES);
    const n = follower(near.path);
    n.f.finish();
    expect(n.text()).toBe(near.text);
  });

  it('a skip after a line cut in the middle starts its mark on a line of its own', () => {
    const { path } = outputOf('cut', 2 * DRAIN_SLICE_BYTES);
    const r = follower(path);
    // The first slice ends where 1 MiB ends, inside a line; then the run
    // writes far more than the skip allows before the next turn.
    r.f.drain();
    const first = r.text();
    expect(first.endsWith('\n')).toBe(false);
    writeFileSync(path, `${'y'.repeat(SKIP_BEHIND_BYTES * 2)}\nlast line\n`, { flag: 'a' });
    r.turns();
    const after = r.text().slice(first.length);
    const mark = after.indexOf('[roundtable: live output skipped');
    expect(mark).toBeGreaterThanOrEqual(0);
    expect((first + after.slice(0, mark)).endsWith('\n')).toBe(true);
    expect(r.text().endsWith('last line\n')).toBe(true);
    r.f.close();
  });
});
