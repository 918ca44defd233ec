import { describe, expect, it } from 'vitest';
import * as waves from '../../src/actors/inWaves.js';
import { inWaves } from '../../src/actors/inWaves.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/inWaves.ts', import.meta.url), waves);

/** A call whose settling the test decides. */
function deferred() {
  let settle: (ok: boolean) => void = () => {};
  const done = new Promise<string>((resolve, reject) => {
    settle = (ok) => (ok ? resolve('ok') : reject(new Error('no')));
  });
  return { done, settle };
}

describe('inWaves', () => {
  it('sends what arrives while a wave is out as one next wave, after every call of it settled', async () => {
    const wave = inWaves(10);
    const started: string[] = [];
    const a = deferred();
    const b = deferred();
    const first = [
      wave(() => {
        started.push('a');
        return a.done;
      }),
      wave(() => {
        started.push('b');
        return b.done;
      }),
    ];
    await null;
    await null;
    const later = [wave(async () => started.push('c')), wave(async () => started.push('d'))];
    await new Promise((r) => setTimeout(r, 5));
    expect(started).toEqual(['a', 'b']);
    a.settle(true);
    await new Promise((r) => setTimeout(r, 5));
    // One call of the wave is still out: the next waits.
    expect(started).toEqual(['a', 'b']);
    // A failed call ends its part of the wave too; its caller gets the error.
    b.settle(false);
    await expect(first[1]).rejects.toThrow('no');
    await Promise.all(later);
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    await expect(first[0]).resolves.toBe('ok');
  });

  it('sends at most max at once', async () => {
    const wave = inWaves(2);
    let out = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 7 }, () =>
        wave(async () => {
          out += 1;
          most = Math.max(most, out);
          await new Promise((r) => setTimeout(r, 1));
          out -= 1;
        }),
      ),
    );
    expect(most).toBe(2);
  });
});
