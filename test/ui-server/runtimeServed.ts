/**
 * For the UI server's tests over the real runtime: each test's harness,
 * server and sockets, ended after it whatever it did, and a simulated
 * agent's run spec.
 */
import { afterEach } from 'vitest';
import type { TestRuntime } from '../../src/testing/index.js';
import { createUiServer, type UiServer } from '../../src/ui-server/createUiServer.js';
import { ADMIN, type RawClient, TOKENS } from './wsHarness.js';

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

/** What the board's server logs through; the tests that read its lines pass their own. */
export type ServerLogger = Record<'info' | 'warn' | 'error', (o: object, msg: string) => void>;

const quiet: ServerLogger = { info: () => {}, warn: () => {}, error: () => {} };

/** The board's server over the test runtime, on a free port, with Alice's and the admin's tokens. */
export const serveRuntime = (t: TestRuntime, logger: ServerLogger = quiet) =>
  createUiServer({
    source: t.runtime,
    commands: t.runtime,
    tokens: { users: { alice: TOKENS.users.alice }, admin: ADMIN },
    port: 0,
    host: '127.0.0.1',
    logger,
  });
