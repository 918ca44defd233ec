import { describe, expect, it } from 'vitest';
import * as mod from '../../src/supervisor/Listeners.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/Listeners.ts', import.meta.url), mod);

describe('Listeners', () => {
  it('a throw goes to onThrow with the value, and the next listener still runs', () => {
    const threw: Array<[unknown, number]> = [];
    const ls = new mod.Listeners<number>((e, v) => threw.push([e, v]));
    const heard: number[] = [];
    const boom = new Error('boom');
    ls.add(() => {
      throw boom;
    });
    const off = ls.add((v) => heard.push(v));
    ls.emit(1);
    off();
    ls.emit(2);
    expect(heard).toEqual([1]);
    expect(threw).toEqual([
      [boom, 1],
      [boom, 2],
    ]);
    expect(ls.size).toBe(1);
  });
});
