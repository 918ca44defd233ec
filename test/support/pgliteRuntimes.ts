/**
 * One in-memory PGlite per test file (initdb takes seconds) and the
 * simulation harnesses its tests open on it, each closed after its test,
 * passed or failed.
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll } from 'vitest';
import { connect, type Db, type DbHandle, migrate } from '../../src/db/index.js';
import {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from '../../src/testing/index.js';
import { migratedPglite } from '../../src/testing/migratedPglite.js';

export interface PgliteRuntimes {
  /** The file's PGlite (created in `beforeAll`). */
  readonly pglite: PGlite;
  /** A harness on the file's PGlite (its tables emptied first), closed after the test. */
  open(options?: Omit<TestRuntimeOptions, 'pglite' | 'db'>): Promise<TestRuntime>;
}

/** Registers the file's hooks; call it at the top level of a test file. */
export function pgliteRuntimes(): PgliteRuntimes {
  let pglite: PGlite | undefined;
  const opened: TestRuntime[] = [];
  beforeAll(async () => {
    pglite = await migratedPglite();
  }, 30_000);
  afterEach(async () => {
    for (const h of opened.splice(0)) await h.close();
  });
  afterAll(async () => {
    await pglite?.close();
  });
  const file = (): PGlite => {
    if (pglite === undefined) throw new Error('pgliteRuntimes: used outside a test');
    return pglite;
  };
  return {
    get pglite() {
      return file();
    },
    async open(options = {}) {
      const h = await createTestRuntime({ ...options, pglite: file() });
      // A test may close its harness itself (to open another on the same file): closed once.
      const close = h.close.bind(h);
      let closed: Promise<void> | undefined;
      h.close = () => {
        closed ??= close();
        return closed;
      };
      opened.push(h);
      return h;
    },
  };
}

/**
 * One in-memory PGlite per test file, connected and migrated, for tests
 * that boot runtimes with `createRuntime` themselves (closed after the file).
 */
export function pgliteStore(): { readonly db: Db } {
  let pglite: PGlite | undefined;
  let handle: DbHandle | undefined;
  beforeAll(async () => {
    pglite = await migratedPglite();
    handle = await connect({ pglite });
    await migrate(handle.db);
  }, 30_000);
  afterAll(async () => {
    await handle?.close();
    await pglite?.close();
  });
  return {
    get db() {
      if (handle === undefined) throw new Error('pgliteStore: used outside a test');
      return handle.db;
    },
  };
}
