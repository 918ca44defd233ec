/**
 * "Load earlier lines" joins the lines it prepends to those shown, even
 * when a page ends short of them (a page holds at most a budget of bytes).
 */
import { expect, it } from 'vitest';
import type { OutputPage } from '../../../src/board/taskDetail.js';
import * as module from '../../../src/ui-server/page/linesBefore.js';
import { linesBefore } from '../../../src/ui-server/page/linesBefore.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/page/linesBefore.ts', import.meta.url), module);

it('a page cut short by its byte budget is asked again nearer, and joins', async () => {
  const lines = ['a', 'x'.repeat(50), 'y'.repeat(50), 'b', 'c'];
  const asked: Array<[number, number]> = [];
  // A budget of 60 bytes: the two long lines do not fit together.
  const read = async (from: number, count: number): Promise<OutputPage> => {
    asked.push([from, count]);
    const out: string[] = [];
    let bytes = 0;
    for (const line of lines.slice(from, from + count)) {
      if (out.length > 0 && bytes + line.length > 60) break;
      out.push(line);
      bytes += line.length;
    }
    return { from, lines: out, totalLines: lines.length } as OutputPage;
  };
  const older = await linesBefore(read, 3, 3);
  expect(older?.from).toBe(2);
  expect(older?.lines).toEqual(['y'.repeat(50)]);
  // Each short answer says how many fitted: asked again for that many, nearer.
  expect(asked).toEqual([
    [0, 3],
    [1, 2],
    [2, 1],
  ]);
});
