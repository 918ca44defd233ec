/**
 * The engine-agnostic follower over a fake source on virtual time: UTF-8
 * split across reads, the skip when far behind, a file that shrank, and
 * faults before and after a stop.
 */

import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import * as polled from '../../src/containers/polledFollower.js';
import {
  followPolled,
  type OutputSlice,
  type OutputSource,
  sliceOf,
} from '../../src/containers/polledFollower.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/containers/polledFollower.ts', import.meta.url), polled);

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A growing file; `fail` makes the next reads reject. */
function fakeFile() {
  let file = Buffer.alloc(0);
  const state = { fail: false, reads: 0, replaced: false };
  const source: OutputSource = {
    async read(from, limit): Promise<OutputSlice> {
      state.reads += 1;
      if (state.fail) throw new Error('engine down');
      if (state.replaced) return { kind: 'replaced' };
      return sliceOf(file, from, limit);
    },
  };
  return {
    state,
    source,
    write: (b: Buffer | string) => {
      file = Buffer.concat([file, Buffer.from(b)]);
    },
    truncate: () => {
      file = Buffer.alloc(0);
    },
  };
}

function run(
  source: OutputSource,
  o: {
    sliceBytes?: number;
    fromByte?: number;
    tailBytes?: number;
    skip?: number;
    quietPollMs?: number;
  } = {},
) {
  const clock = new SimulatedClock();
  const chunks: string[] = [];
  const abort = new AbortController();
  const ends = { count: 0 };
  followPolled(
    source,
    {
      signal: abort.signal,
      onOutput: (c) => chunks.push(c),
      onEnd: () => {
        ends.count += 1;
      },
      ...(o.fromByte === undefined ? {} : { fromByte: o.fromByte }),
      ...(o.tailBytes === undefined ? {} : { tailBytes: o.tailBytes }),
    },
    {
      clock,
      pollMs: 1000,
      ...(o.quietPollMs === undefined ? {} : { quietPollMs: o.quietPollMs }),
      sliceBytes: o.sliceBytes ?? 1024,
      skipBehindBytes: o.skip ?? 1 << 20,
      skipToTailBytes: 8,
    },
    1 << 20,
  );
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      clock.increment(100);
      await flush();
    }
  };
  return { chunks, ends, text: () => chunks.join(''), stop: () => abort.abort(), advance };
}

describe('followPolled', () => {
  it('a quiet file is read less often, up to quietPollMs; new bytes bring back pollMs', async () => {
    const f = fakeFile();
    const r = run(f.source, { quietPollMs: 5000 });
    const readsAt: number[] = [];
    let t = 0;
    const step = async (ms: number) => {
      for (let i = 0; i < ms; i += 100) {
        const before = f.state.reads;
        await r.advance(100);
        t += 100;
        if (f.state.reads > before) readsAt.push(t);
      }
    };
    // The first read comes at once (seen at the first 100 ms step), then
    // each read that finds nothing new doubles the wait: 1, 2, 4, 5, 5 s.
    await step(19_000);
    expect(readsAt).toEqual([100, 1100, 3100, 7100, 12100, 17100]);
    f.write('news\n');
    readsAt.length = 0;
    await step(8_000);
    // The read at 22.1 s finds the line; the next waits are 1 s, 1 s (one
    // empty read is not yet quiet), then 2 s.
    expect(r.text()).toBe('news\n');
    expect(readsAt).toEqual([22100, 23100, 24100, 26100]);
  });

  it('without quietPollMs a quiet file is read every pollMs', async () => {
    const f = fakeFile();
    const r = run(f.source);
    await r.advance(10_000);
    expect(f.state.reads).toBe(10);
  });

  it('a character split between two reads comes out whole', async () => {
    const f = fakeFile();
    f.write('añb\n'); // ñ is two bytes: a 2-byte slice cuts it
    const r = run(f.source, { sliceBytes: 2 });
    await r.advance(500);
    expect(r.text()).toBe('añb\n');
    expect(r.chunks.join('|')).not.toContain('\uFFFD');
  });

  it('far behind: skips to the tail with a marked line, never silently', async () => {
    const f = fakeFile();
    const r = run(f.source, { skip: 32, sliceBytes: 16 });
    await r.advance(100);
    f.write(`${'x'.repeat(99)}\nlast\n`);
    await r.advance(2000);
    // The first slice told how far behind the reader was; the skip's line starts a line of its own.
    expect(r.text()).toBe(
      `${'x'.repeat(16)}\n[roundtable: live output skipped 84 bytes, written faster than they could be shown]\nlast\n`,
    );
  });

  it("a file shorter than what was read is not the run's: the follow stops", async () => {
    const f = fakeFile();
    f.write('one\n');
    const r = run(f.source);
    await r.advance(100);
    f.truncate();
    f.write('x\n');
    await r.advance(1000);
    const reads = f.state.reads;
    await r.advance(5000);
    expect(r.text()).toBe('one\n');
    expect(f.state.reads).toBe(reads);
  });

  it('a fromByte past the end of the file waits for the file to reach it', async () => {
    const f = fakeFile();
    f.write('ab');
    const r = run(f.source, { fromByte: 4 });
    await r.advance(2000);
    f.write('cd\nef\n');
    await r.advance(1000);
    expect(r.text()).toBe('\nef\n');
  });

  it('faults are retried each period; after a stop the first fault ends it', async () => {
    const f = fakeFile();
    const r = run(f.source);
    f.state.fail = true;
    await r.advance(3000);
    expect(f.state.reads).toBeGreaterThanOrEqual(3);
    f.state.fail = false;
    f.write('back\n');
    await r.advance(1000);
    expect(r.text()).toBe('back\n');
    f.state.fail = true;
    r.stop();
    await flush();
    const reads = f.state.reads;
    await r.advance(5000);
    expect(f.state.reads).toBe(reads);
    expect(r.ends.count).toBe(1);
  });

  it("onEnd comes once, after the stop's read to the end passed on the rest", async () => {
    const f = fakeFile();
    const r = run(f.source);
    await r.advance(100);
    f.write('last\n');
    let atEnd = '';
    const ended = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (r.ends.count > 0) {
          atEnd = r.text();
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    r.stop();
    expect(r.ends.count).toBe(0); // the read to the end is a round trip away
    await ended;
    expect(atEnd).toBe('last\n');
    r.stop();
    await r.advance(2000);
    expect(r.ends.count).toBe(1);
  });

  it('a file that was there and is missing again (a container restarted in place) stops it', async () => {
    const f = fakeFile();
    f.write('one\n');
    const r = run(f.source);
    await r.advance(100);
    const missing: OutputSource = {
      read: async () => {
        f.state.reads += 1;
        return { kind: 'missing' };
      },
    };
    f.source.read = missing.read;
    await r.advance(1000);
    const reads = f.state.reads;
    await r.advance(5000);
    expect(f.state.reads).toBe(reads);
    expect(r.ends.count).toBe(1);
  });

  it('a replaced container stops it', async () => {
    const f = fakeFile();
    const r = run(f.source);
    await r.advance(100);
    f.state.replaced = true;
    await r.advance(1000);
    const reads = f.state.reads;
    await r.advance(5000);
    expect(f.state.reads).toBe(reads);
    expect(r.ends.count).toBe(1);
  });

  it('a listener that throws ends the follow, and nothing is thrown at the process', async () => {
    const f = fakeFile();
    f.write('one\n');
    const clock = new SimulatedClock();
    let ended = false;
    followPolled(
      f.source,
      {
        signal: new AbortController().signal,
        onOutput: () => {
          throw new Error('listener bug');
        },
        onEnd: () => {
          ended = true;
        },
      },
      { clock, pollMs: 1000, sliceBytes: 1024, skipBehindBytes: 1 << 20, skipToTailBytes: 8 },
      1 << 20,
    );
    clock.increment(100);
    await flush();
    expect(ended).toBe(true);
  });

  it('an aborted signal follows nothing', async () => {
    const f = fakeFile();
    const abort = new AbortController();
    abort.abort();
    const clock = new SimulatedClock();
    followPolled(
      f.source,
      { signal: abort.signal, onOutput: () => {} },
      {
        clock,
        pollMs: 1000,
        sliceBytes: 1024,
        skipBehindBytes: 1 << 20,
        skipToTailBytes: 8,
      },
      1 << 20,
    );
    clock.increment(5000);
    await flush();
    expect(f.state.reads).toBe(0);
  });
});
