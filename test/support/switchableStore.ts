/**
 * A store a test can take down and bring back without a server: the same
 * Kysely (PGlite or a pool) with a plugin that fails every query while the
 * switch is down, with the error a server that is gone gives
 * (`ECONNREFUSED`, which `isTransientDbError` calls a condition), or, taken
 * down as `'fault'`, an error no retry is for (`XX000`, which crashes the
 * actor that meets it). Queries already past the plugin finish normally, as
 * on a real outage.
 *
 * @example
 * ```ts
 * const store = switchableStore(handle.db);
 * const h = await createTestRuntime({ db: store.db });
 * store.down();
 * // ... every query now rejects with code ECONNREFUSED
 * store.up();
 * ```
 */
import type { KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/index.js';

export interface SwitchableStore {
  readonly db: Db;
  /** Every query from now on fails: `ECONNREFUSED`, or with `'fault'` an internal error (`XX000`). */
  down(kind?: 'outage' | 'fault'): void;
  up(): void;
  readonly isDown: boolean;
  /** Queries refused while down. */
  readonly refused: number;
}

export function switchableStore(db: Db): SwitchableStore {
  let isDown = false;
  let kind: 'outage' | 'fault' = 'outage';
  let refused = 0;
  const plugin: KyselyPlugin = {
    transformQuery(args) {
      if (isDown) {
        refused += 1;
        if (kind === 'fault')
          throw Object.assign(new Error('internal error (test store fault)'), { code: 'XX000' });
        throw Object.assign(new Error('connect ECONNREFUSED (test store down)'), {
          code: 'ECONNREFUSED',
        });
      }
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return {
    db: db.withPlugin(plugin),
    down(as = 'outage') {
      kind = as;
      isDown = true;
    },
    up() {
      isDown = false;
    },
    get isDown() {
      return isDown;
    },
    get refused() {
      return refused;
    },
  };
}
