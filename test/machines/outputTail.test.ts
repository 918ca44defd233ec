import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as tail from '../../src/machines/outputTail.js';
import { memoryAfterGc } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/machines/outputTail.ts', import.meta.url), tail);

const { EMPTY_OUTPUT, capLine, endOutput, pushOutput } = tail;
type OutputTail = tail.OutputTail;
type OutputLimits = tail.OutputLimits;
const CARD = { lines: 20, chars: 500 };

const feed = (chunks: readonly string[], limits: OutputLimits, start: OutputTail = EMPTY_OUTPUT) =>
  chunks.reduce((t, c) => pushOutput(t, c, limits), start);

/** The reference: split the whole output at once, as the board did before. */
const reference = (whole: string, limits: OutputLimits): OutputTail => {
  const parts = whole.split('\n');
  const partial = parts.pop() ?? '';
  const lines = parts.map((l) => capLine(l, limits.chars));
  return {
    lines: limits.lines === 0 ? [] : lines.slice(-limits.lines),
    partial: partial.slice(0, limits.chars + 1),
  };
};

/** Cuts `whole` at the given positions (any order, repeats allowed: empty chunks). */
const splitAt = (whole: string, cuts: readonly number[]): string[] => {
  const at = [...cuts.map((c) => c % (whole.length + 1))].sort((a, b) => a - b);
  return [...at, whole.length].map((end, i) => whole.slice(i === 0 ? 0 : at[i - 1], end));
};

describe('pushOutput', () => {
  test('keeps the last lines and the unfinished one, oldest first', () => {
    const t = feed(['a\nb', '\nc\n', 'd'], { lines: 2, chars: 10 });
    expect(t).toEqual({ lines: ['b', 'c'], partial: 'd' });
  });

  test('a line completed across chunks is cut once, from its start', () => {
    const limits = { lines: 5, chars: 4 };
    const t = feed(['ab', 'cd', 'ef', 'gh\nnext'], limits);
    expect(t).toEqual({ lines: ['abc…'], partial: 'next' });
  });

  test('the partial keeps one character more than a card shows: fits vs cut', () => {
    const limits = { lines: 5, chars: 4 };
    expect(feed(['abcd'], limits).partial).toBe('abcd');
    expect(feed(['abcde', 'fgh'], limits).partial).toBe('abcde');
    expect(endOutput(feed(['abcd'], limits), limits).lines).toEqual(['abcd']);
    expect(endOutput(feed(['abcde'], limits), limits).lines).toEqual(['abc…']);
  });

  test('a full partial is returned as is: more of the same line costs nothing kept', () => {
    const limits = { lines: 5, chars: 4 };
    const full = feed(['abcdefgh'], limits);
    expect(pushOutput(full, 'more', limits)).toBe(full);
    expect(pushOutput(EMPTY_OUTPUT, '', limits)).toBe(EMPTY_OUTPUT);
  });

  test('empty lines count as lines; \\r is a character like any other', () => {
    expect(feed(['\n\n', 'x\r\n'], { lines: 5, chars: 9 })).toEqual({
      lines: ['', '', 'x\r'],
      partial: '',
    });
  });

  test('lines: 0 keeps no line, only the partial', () => {
    expect(feed(['a\nb\nc'], { lines: 0, chars: 5 })).toEqual({ lines: [], partial: 'c' });
    expect(endOutput(feed(['a\nb'], { lines: 0, chars: 5 }), { lines: 0, chars: 5 })).toEqual(
      EMPTY_OUTPUT,
    );
  });

  test('a chunk of more lines than are kept replaces all the earlier ones', () => {
    const limits = { lines: 3, chars: 9 };
    const t = feed(['old\nolder\npart', 'ial\n1\n2\n3\n4\ntail'], limits);
    expect(t).toEqual({ lines: ['2', '3', '4'], partial: 'tail' });
  });

  test.each([
    [{ lines: -1, chars: 5 }],
    [{ lines: 1.5, chars: 5 }],
    [{ lines: 2, chars: 0 }],
    [{ lines: 2, chars: Number.NaN }],
  ])('rejects limits %o with a RangeError', (limits) => {
    expect(() => pushOutput(EMPTY_OUTPUT, 'x', limits)).toThrow(RangeError);
    expect(() => endOutput(EMPTY_OUTPUT, limits)).toThrow(RangeError);
  });
});

describe('endOutput', () => {
  test('turns the partial into the last line and keeps nothing growing', () => {
    const limits = { lines: 2, chars: 5 };
    expect(endOutput(feed(['a\nb\nlast'], limits), limits)).toEqual({
      lines: ['b', 'last'],
      partial: '',
    });
    expect(endOutput(feed(['a\n'], limits), limits)).toEqual({ lines: ['a'], partial: '' });
  });
});

describe('properties', () => {
  const text = fc.string({
    unit: fc.constantFrom('a', 'b', '\n', '\r', 'é', '😀'),
    maxLength: 200,
  });
  const limits = fc.record({
    lines: fc.integer({ min: 0, max: 6 }),
    chars: fc.integer({ min: 1, max: 8 }),
  });

  test.prop([text, fc.array(fc.nat(), { maxLength: 12 }), limits])(
    'any split into chunks keeps what splitting the whole at once keeps, capped',
    (whole, cuts, l) => {
      const got = feed(splitAt(whole, cuts), l);
      expect(got).toEqual(reference(whole, l));
      expect(endOutput(got, l)).toEqual(endOutput(reference(whole, l), l));
    },
  );

  test.prop([text, fc.array(fc.nat(), { maxLength: 12 }), limits])(
    'what is kept is bounded by the limits, whatever came before',
    (whole, cuts, l) => {
      const got = feed(splitAt(whole, cuts), l);
      expect(got.lines.length).toBeLessThanOrEqual(l.lines);
      for (const line of got.lines) expect(line.length).toBeLessThanOrEqual(l.chars);
      expect(got.partial.length).toBeLessThanOrEqual(l.chars + 1);
      const ended = endOutput(got, l);
      expect(ended.partial).toBe('');
      for (const line of ended.lines) expect(line.length).toBeLessThanOrEqual(l.chars);
    },
  );
});

/**
 * Counts the characters the string methods the module may use read, by
 * wrapping them while `fn` runs (synchronously: nothing else runs meanwhile).
 * A quadratic pass (splitting the line so far again on every chunk) shows as
 * a count growing with the square of the bytes.
 */
function charactersRead(fn: () => void): number {
  const proto = String.prototype;
  const saved = {
    indexOf: proto.indexOf,
    lastIndexOf: proto.lastIndexOf,
    split: proto.split,
    slice: proto.slice,
  };
  let read = 0;
  proto.indexOf = function (this: string, s: string, from?: number) {
    const at = saved.indexOf.call(this, s, from);
    read += (at === -1 ? this.length : at + 1) - (from ?? 0);
    return at;
  };
  proto.lastIndexOf = function (this: string, s: string, from?: number) {
    const at = saved.lastIndexOf.call(this, s, from);
    read += (from ?? this.length) - at;
    return at;
  };
  proto.split = function (this: string, ...args: Parameters<string['split']>) {
    read += this.length;
    return saved.split.apply(this, args);
  } as typeof proto.split;
  proto.slice = function (this: string, start?: number, end?: number) {
    const out = saved.slice.call(this, start, end);
    read += out.length;
    return out;
  };
  try {
    fn();
  } finally {
    Object.assign(proto, saved);
  }
  return read;
}

describe('a 20 MB line', () => {
  const MB = 1_000_000;
  const chunksOf = (total: number, size: number, unit = 'x') =>
    Array.from({ length: Math.ceil(total / size) }, () => unit.repeat(size / unit.length));

  test('costs work linear in its bytes: reading each byte about once', () => {
    const chunks = chunksOf(20 * MB, 64 * 1024);
    let out: OutputTail = EMPTY_OUTPUT;
    const read = charactersRead(() => {
      out = endOutput(feed(chunks, CARD), CARD);
    });
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    expect(read).toBeLessThan(bytes * 1.01 + 10_000);
    expect(out).toEqual({ lines: [capLine('x'.repeat(501), 500)], partial: '' });
  });

  test('as many lines costs the same: only the kept lines are copied', () => {
    const chunks = chunksOf(20 * MB, 64 * 1024, `${'x'.repeat(63)}\n`);
    const read = charactersRead(() => feed(chunks, CARD));
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    expect(read).toBeLessThan(bytes * 1.01);
  });

  test('keeps a bounded size, and no reference to the chunks it came in', () => {
    const heap = () => memoryAfterGc().heapUsed;
    const kept: OutputTail[] = [];
    const before = heap();
    for (let run = 0; run < 10; run++) {
      // One 20 MB chunk, then a newline: a slice kept as a view would pin it.
      let t = pushOutput(EMPTY_OUTPUT, 'y'.repeat(19 * MB) + 'x'.repeat(MB), CARD);
      t = endOutput(pushOutput(t, 'end\nlast line', CARD), CARD);
      kept.push(t);
    }
    const grown = heap() - before;
    expect(kept.every((t) => t.lines.length === 2 && t.partial === '')).toBe(true);
    // 10 runs × 20 MB pinned would be 200 MB; the kept lines are ~10 kB.
    expect(grown).toBeLessThan(4 * MB);
  });
});
