/** The systems the bench compares, by name (the worker child looks them up here). */
import type { BenchSystem, UnavailableSystem } from '../types.js';
import { roundtableFloor } from './roundtableFloor.js';
import {
  roundtableRestart,
  roundtableRuntime,
  roundtableRuntimeCaps,
  roundtableRuntimeCaps3,
} from './roundtableRuntime.js';
import { roundtableTick } from './roundtableTick.js';

/**
 * The peers' adapters import packages the main install leaves out (they want
 * Node >= 22.12): bench/peers/package.json has them, `npm run bench:peers`
 * installs them. Loaded by a computed path, so the main typecheck, which runs
 * without them, does not follow these files (bench/peers/tsconfig.json does).
 */
async function loadPeer(name: string, file: string, exported: string) {
  const path: string = new URL(file, import.meta.url).href;
  try {
    const mod = (await import(path)) as Record<string, BenchSystem>;
    return mod[exported]!;
  } catch (e) {
    const missing = (e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
    if (!(missing && String(e).includes(`'${name}'`))) throw e;
    return { name, unavailable: 'not installed: run `npm run bench:peers`' };
  }
}

const pgBoss = await loadPeer('pg-boss', './pgBoss.ts', 'pgBoss');
const graphileWorker = await loadPeer('graphile-worker', './graphileWorker.ts', 'graphileWorker');

export const SYSTEMS: readonly (BenchSystem | UnavailableSystem)[] = [
  pgBoss,
  graphileWorker,
  roundtableRuntime,
  roundtableRuntimeCaps,
  roundtableRuntimeCaps3,
  roundtableRestart,
  roundtableTick,
  roundtableFloor,
];

export function systemByName(name: string): BenchSystem | UnavailableSystem {
  const found = SYSTEMS.find((s) => s.name === name);
  if (found === undefined) {
    throw new RangeError(`unknown system ${name}; known: ${SYSTEMS.map((s) => s.name).join(', ')}`);
  }
  return found;
}
