import { expect, it } from 'vitest';
import { slowestLines } from './slowestReporter.js';

it('lists the slowest files first, up to the limit, in seconds', () => {
  const files: [string, number][] = [
    ['a.test.ts', 1.25],
    ['b.test.ts', 30],
    ['c.test.ts', 4],
  ];
  expect(slowestLines(files, 1)).toEqual(['  30.0 s  b.test.ts']);
  expect(slowestLines(files, 5)).toEqual([
    '  30.0 s  b.test.ts',
    '   4.0 s  c.test.ts',
    '   1.3 s  a.test.ts',
  ]);
  expect(slowestLines([], 3)).toEqual([]);
});
