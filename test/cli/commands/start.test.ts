/**
 * `roundtable start` stopped by a signal while it is still starting
 * (src/cli/commands/start.ts): the stop's deadline (`shutdownMs`) runs from
 * the signal, not from the end of a start that may take a minute (a store
 * that stopped answering, PGlite's initdb, the wait for the boot pass).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../src/cli/runCli.js';
import { capture } from '../cliCapture.js';

let dir: string;
let server: Server;
let port: number;
const held = new Set<Socket>();
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'rt-cli-start-'));
  // A "Postgres" that accepts connections and never answers: a store that
  // went silent (a hung host, a cut network) while a node was starting.
  server = createServer((socket) => {
    held.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('start, stopped while starting', () => {
  it('a SIGTERM during a start that hangs ends the process within shutdownMs (exit 6)', async () => {
    const node = capture();
    const running = runCli(
      [
        'start',
        '--port',
        '0',
        '--data-dir',
        dir,
        '--shutdown-ms',
        '300',
        '--database-url',
        `postgres://postgres@127.0.0.1:${port}/silent`,
      ],
      node.io,
    );
    const deadline = Date.now() + 20_000;
    while (!node.out().includes('opening Postgres')) {
      if (Date.now() > deadline) throw new Error(`never started to open: ${node.err()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    node.signal('SIGTERM');
    const signalled = Date.now();
    // The connect's own deadline is 10 s: the stop must not wait for it.
    while (node.exits.length === 0 && Date.now() - signalled < 5_000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(node.exits).toEqual([6]);
    expect(Date.now() - signalled).toBeLessThan(3_000);
    expect(node.out()).toContain('the stop took too long; ending now');
    // The start goes on failing by itself (the test's io.exit ends nothing).
    expect(await running).toBe(3);
    // Its deadline was spent; nothing fires again once the command returned.
    expect(node.exits).toEqual([6]);
  }, 30_000);
});
