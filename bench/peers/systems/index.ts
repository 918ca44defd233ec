/** The systems the bench compares, by name (the worker child looks them up here). */
import type { BenchSystem, UnavailableSystem } from '../types.js';
import { graphileWorker } from './graphileWorker.js';
import { pgBoss } from './pgBoss.js';
import {
  roundtableRestart,
  roundtableRuntime,
  roundtableRuntimeCaps,
} from './roundtableRuntime.js';
import { roundtableStore } from './roundtableStore.js';

export const SYSTEMS: readonly (BenchSystem | UnavailableSystem)[] = [
  pgBoss,
  graphileWorker,
  roundtableRuntime,
  roundtableRuntimeCaps,
  roundtableRestart,
  roundtableStore,
];

export function systemByName(name: string): BenchSystem | UnavailableSystem {
  const found = SYSTEMS.find((s) => s.name === name);
  if (found === undefined) {
    throw new RangeError(`unknown system ${name}; known: ${SYSTEMS.map((s) => s.name).join(', ')}`);
  }
  return found;
}
