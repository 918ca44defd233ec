/**
 * A boot lock config for tests against the Postgres server: short deadlines
 * and retries, the real timers, errors dropped (each test watches the states).
 */
import type { BootLockConfig, BootLockState } from '../../src/db/bootLock.js';
import { REAL_TIMERS } from '../../src/db/dedicatedClient.js';

export function testBootLockConfig(
  url: string,
  owner: string,
  o: { pingMs: number; onState?: (state: BootLockState) => void },
): BootLockConfig {
  return {
    client: { connectionString: url, query_timeout: 2_000, connectionTimeoutMillis: 5_000 },
    owner,
    pingMs: o.pingMs,
    retryMinMs: 20,
    retryMaxMs: 200,
    closeTimeoutMs: 2_000,
    timers: REAL_TIMERS,
    onState: o.onState ?? (() => undefined),
    onError: () => undefined,
  };
}
