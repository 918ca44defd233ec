/** The systems the bench compares, by name (the worker child looks them up here). */
import type { BenchSystem, UnavailableSystem } from '../types.js';
import { graphileWorker } from './graphileWorker.js';
import { pgBoss } from './pgBoss.js';
import {
  roundtableRestart,
  roundtableRuntime,
  roundtableRuntimeCaps,
  roundtableRuntimeCaps3,
} from './roundtableRuntime.js';
import { roundtableTick } from './roundtableTick.js';

export const SYSTEMS: readonly (BenchSystem | UnavailableSystem)[] = [
  pgBoss,
  graphileWorker,
  roundtableRuntime,
  roundtableRuntimeCaps,
  roundtableRuntimeCaps3,
  roundtableRestart,
  roundtableTick,
];

export function systemByName(name: string): BenchSystem | UnavailableSystem {
  const found = SYSTEMS.find((s) => s.name === name);
  if (found === undefined) {
    throw new RangeError(`unknown system ${name}; known: ${SYSTEMS.map((s) => s.name).join(', ')}`);
  }
  return found;
}
