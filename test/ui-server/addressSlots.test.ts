/**
 * Places per remote address: the doc examples (the key an address is counted
 * under, a release given once, the cap), and a full address that frees a
 * place takes one again.
 */
import { expect, it } from 'vitest';
import * as slotsModule from '../../src/ui-server/addressSlots.js';
import { AddressSlots } from '../../src/ui-server/addressSlots.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/addressSlots.ts', import.meta.url), slotsModule);

it('an address at its cap takes a place again once one is given back; others are not counted', () => {
  const slots = new AddressSlots(1);
  const release = slots.take('10.0.0.1');
  expect(slots.take('::ffff:10.0.0.1')).toBeNull();
  expect(slots.take('10.0.0.2')).not.toBeNull();
  release?.();
  expect(slots.held('10.0.0.1')).toBe(0);
  expect(slots.take('10.0.0.1')).not.toBeNull();
});
