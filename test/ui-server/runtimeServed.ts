/**
 * For the UI server's tests over the real runtime: each test's harness,
 * server and sockets, ended after it whatever it did, and a simulated
 * agent's run spec.
 */
import { afterEach } from 'vitest';
import type { TestRuntime } from '../../src/testing/index.js';
import type { UiServer } from '../../src/ui-server/createUiServer.js';
import type { RawClient } from './wsHarness.js';

/** What a test opened; set `h` and `server` as they open, push every socket to `clients`. */
export interface Served {
  h: TestRuntime | undefined;
  server: UiServer | undefined;
  readonly clients: RawClient[];
}

/** The test's harness, server and sockets, ended after each test (sockets first). */
export function servedEachTest(): Served {
  const served: Served = { h: undefined, server: undefined, clients: [] };
  afterEach(async () => {
    for (const c of served.clients.splice(0)) c.ws.terminate();
    await served.server?.close();
    await served.h?.close();
    served.server = undefined;
    served.h = undefined;
  });
  return served;
}

/** A simulated agent working for `seconds` (src/containers/simulated/commands.ts). */
export const agent = (title: string, seconds: number) => ({
  title,
  image: 'runner:v1',
  command: ['agent', String(seconds)],
});
