/**
 * The board's registry on its own: refusals are counted by code, with the
 * number of series bounded however many codes arrive.
 */
import { expect, it } from 'vitest';
import { createBoardMetrics, MAX_REFUSAL_CODES } from '../../src/ui-server/boardMetrics.js';
import { FakeBoard } from '../support/fakeBoard.js';

const refusalSeries = (text: string) =>
  Object.fromEntries(
    [...text.matchAll(/^roundtable_http_refusals_total\{code="([^"]+)"\} (\d+)$/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]),
  );

it('counts refusals by code, and codes past the bound as `other`', async () => {
  const metrics = createBoardMetrics(new FakeBoard(), () => ({
    connections: 0,
    framesSent: 0,
    slowConsumersClosed: 0,
  }));
  expect(refusalSeries(await metrics.render())).toEqual({});
  metrics.refused('too_many_output_reads');
  metrics.refused('too_many_output_reads');
  metrics.refused('unauthorized');
  expect(refusalSeries(await metrics.render())).toEqual({
    too_many_output_reads: 2,
    unauthorized: 1,
  });
  for (let i = 0; i < MAX_REFUSAL_CODES + 10; i++) metrics.refused(`code_${i}`);
  metrics.refused('unauthorized');
  const series = refusalSeries(await metrics.render());
  expect(Object.keys(series)).toHaveLength(MAX_REFUSAL_CODES + 1);
  expect(series.other).toBe(12);
  expect(series.unauthorized).toBe(2);
});
