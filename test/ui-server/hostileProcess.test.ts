/**
 * A real node, as a child process, under the hostile requests of issue 14:
 * request targets `new URL()` refuses, malformed headers and bodies, on plain
 * requests and upgrades. After each one the node must still answer
 * `/healthz` with 200, and at the end still stream the board; an uncaught
 * exception would have ended the process.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess } from '../cli/cliProcess.js';
import {
  badTargetRequests,
  malformedRequests,
  rawExchange,
  slashedPathRequests,
} from './hostileInput.js';
import { ALICE, RawClient } from './wsHarness.js';

const UP_MS = 30_000;
const fixture = fileURLToPath(new URL('./fixtures/uiServerNode.ts', import.meta.url));
let node: CliProcess;
let url: string;
let port: number;

beforeAll(async () => {
  node = new CliProcess(fixture, [], { NODE_OPTIONS: '--import tsx' });
  const up = await node.waitFor((r) => r.msg === 'listening', UP_MS, 'the node listening');
  url = String(up.url);
  port = Number(up.port);
}, UP_MS + 5_000);

afterAll(async () => {
  node?.signal('SIGTERM');
  await node?.exitCode(10_000).catch(() => node.kill());
});

const healthz = async () =>
  (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) })).status;

describe('a node under hostile requests', () => {
  it('answers each bad request target with 400 and keeps serving', async () => {
    for (const r of badTargetRequests()) {
      const answer = await rawExchange(port, r.bytes);
      expect(answer.status, r.name).toBe(400);
      expect(await healthz(), `after ${r.name}`).toBe(200);
    }
  }, 60_000);

  it('survives malformed headers and bodies, then still streams the board', async () => {
    for (const r of malformedRequests(ALICE)) {
      await rawExchange(port, r.bytes, 1000);
      expect(await healthz(), `after ${r.name}`).toBe(200);
    }
    // All at once as well, on parallel sockets.
    await Promise.all(
      [...badTargetRequests(), ...slashedPathRequests(), ...malformedRequests(ALICE)].map((r) =>
        rawExchange(port, r.bytes, 1000),
      ),
    );
    expect(await healthz()).toBe(200);
    const c = await RawClient.open(`${url.replace('http', 'ws')}/ws`, ALICE);
    c.send({ type: 'subscribe', v: 1 });
    expect((await c.next('snapshot')).cards).toEqual([]);
    c.ws.terminate();
    expect(node.stderr).toBe('');
  }, 60_000);
});
