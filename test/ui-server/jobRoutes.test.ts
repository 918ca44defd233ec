import { expect, it } from 'vitest';
import * as mod from '../../src/ui-server/jobRoutes.js';
import { downloadName, parsePageQuery } from '../../src/ui-server/jobRoutes.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/jobRoutes.ts', import.meta.url), mod);

it('refuses page queries it does not know, and names downloads safely', () => {
  expect(parsePageQuery(new URLSearchParams('from=3&count=10'))).toEqual({ from: 3, count: 10 });
  expect(parsePageQuery(new URLSearchParams(''))).toEqual({ from: undefined, count: 1000 });
  for (const q of ['from=-1', 'count=5001', 'count=x', 'tail=3']) {
    expect(parsePageQuery(new URLSearchParams(q))).toMatchObject({
      status: 400,
      code: 'bad_request',
    });
  }
  expect(downloadName('t"1', 's\r\n1')).toBe('t_1-s__1.log');
});
