/**
 * The inspector mounted on the board's UI server through its `inspector`
 * option: one port, the board's tokens, both topics side by side.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUiServer, type UiServer } from '../../../src/ui-server/createUiServer.js';
import { FakeBoard } from '../../support/fakeBoard.js';
import { ADMIN, ALICE, RawClient, TOKENS } from '../wsHarness.js';
import { startWorkload, type Workload } from './fixtures.js';
import { InspectClient } from './inspectClient.js';

describe('inspector option of createUiServer', () => {
  let w: Workload;
  let server: UiServer;

  beforeAll(async () => {
    w = await startWorkload();
    const board = new FakeBoard({ maxRunning: 2, now: () => w.clock.now() });
    server = await createUiServer({
      source: board,
      commands: board,
      tokens: TOKENS,
      port: 0,
      host: '127.0.0.1',
      logger: pino({ level: 'silent' }),
      inspector: w.inspector,
    });
  });

  afterAll(async () => {
    await server?.close();
    await w?.root.shutdown();
  });

  it('serves the page and the admin topic next to the board, with the board’s tokens', async () => {
    expect((await fetch(`${server.url}/inspect`)).status).toBe(200);
    expect((await fetch(`${server.url}/inspect.js`)).status).toBe(200);
    expect(await InspectClient.refusal(server.url, { authorization: `Bearer ${ALICE}` })).toBe(403);
    const viewer = await InspectClient.open(server.url, ADMIN);
    const tree = await viewer.take('tree');
    expect(tree.roots).toEqual([w.root.sessionId]);
    // The board is untouched: its own socket and routes still answer.
    const board = await RawClient.open(server.wsUrl, ALICE);
    board.close();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    await server.close();
    expect((await viewer.closed).code).toBe(1001);
  });
});
