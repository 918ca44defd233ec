/**
 * What a node's health says an operator can alert on, as yes/no: whether it
 * takes grants (a boot that lost its lock, or took it nowhere because its
 * connections are not sessions, takes none: it cannot prove it is alive),
 * whether it hears other nodes' ticks by NOTIFY or only polls, whether it
 * leads the Reconciler, whether its container engine answers. `/healthz`
 * says the words, `/metrics` the same as 1 / 0 gauges; a part the node does
 * not have (no boot lock on PGlite, no leader lock) is left out.
 */
import type { BoardCommands } from '../board/boardPort.js';

export type NodeHealth = ReturnType<NonNullable<BoardCommands['health']>>;

export interface HealthFlags {
  engineAvailable: boolean;
  takingGrants?: boolean;
  listening?: boolean;
  leading?: boolean;
}

/**
 * @example
 * ```ts
 * healthFlags({ engine: 'available' }) // => { engineAvailable: true }
 * healthFlags({ engine: 'available', lock: 'held', notifications: 'listening', reconciler: 'leader' }) // => { engineAvailable: true, takingGrants: true, listening: true, leading: true }
 * healthFlags({ engine: 'unavailable', lock: 'lost', notifications: 'polling', reconciler: 'lost' }) // => { engineAvailable: false, takingGrants: false, listening: false, leading: false }
 * healthFlags({ engine: 'available', lock: 'none', reconciler: 'none' }).takingGrants // => true
 * healthFlags({ engine: 'available', lock: 'busy', reconciler: 'none' }) // => { engineAvailable: true, takingGrants: false }
 * ```
 */
export function healthFlags(h: NodeHealth): HealthFlags {
  return {
    engineAvailable: h.engine === 'available',
    ...(h.lock !== undefined ? { takingGrants: h.lock === 'held' || h.lock === 'none' } : {}),
    ...(h.notifications !== undefined ? { listening: h.notifications === 'listening' } : {}),
    ...(h.reconciler !== undefined && h.reconciler !== 'none'
      ? { leading: h.reconciler === 'leader' }
      : {}),
  };
}
