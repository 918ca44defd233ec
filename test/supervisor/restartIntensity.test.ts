import * as mod from '../../src/supervisor/restartIntensity.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/restartIntensity.ts', import.meta.url), mod);

import { fc, test } from '@fast-check/vitest';
import { expect } from 'vitest';

test.prop([fc.array(fc.nat({ max: 100_000 })), fc.integer({ min: 1, max: 10_000 })])(
  'the window keeps exactly the restarts within the period, newest first',
  (gaps, period) => {
    let window: number[] = [];
    const instants: number[] = [];
    let now = 0;
    for (const g of gaps) {
      now += g;
      instants.push(now);
      window = mod.addRestart(window, now, period);
    }
    const expected = instants.filter((t) => t >= now - period).reverse();
    expect(window).toEqual(expected);
  },
);
