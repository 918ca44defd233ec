/**
 * Connection caps per user, per remote address and in all, with the admin
 * counted apart: one user opening sockets can lock out neither other users
 * nor the admin. Each refusal is typed (429/503 and a code).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { SUBPROTOCOL } from '../../src/board/boardProtocol.js';
import * as limiterModule from '../../src/ui-server/connectionLimiter.js';
import { ConnectionLimiter } from '../../src/ui-server/connectionLimiter.js';
import { UiRequestError } from '../../src/ui-server/listenerGuard.js';
import { UI_SERVER_DEFAULTS } from '../../src/ui-server/uiServerOptions.js';
import { runDocExamples } from '../support/docExamples.js';
import { ADMIN, ALICE, BOB, type Harness, RawClient, startHarness } from './wsHarness.js';

runDocExamples(new URL('../../src/ui-server/connectionLimiter.ts', import.meta.url), limiterModule);

const ann = { kind: 'user', userId: 'ann' } as const;
const bo = { kind: 'user', userId: 'bo' } as const;
const admin = { kind: 'admin' } as const;

describe('ConnectionLimiter', () => {
  const caps = {
    maxConnections: 3,
    maxConnectionsPerUser: 2,
    maxConnectionsPerAddress: 2,
    maxAdminConnections: 1,
  };
  const code = (r: unknown) => (r instanceof UiRequestError ? `${r.status} ${r.code}` : 'ok');

  it('documents 50 per user and 200 per address as the defaults', () => {
    expect(UI_SERVER_DEFAULTS.maxConnectionsPerUser).toBe(50);
    expect(UI_SERVER_DEFAULTS.maxConnectionsPerAddress).toBe(200);
  });

  it('refuses a user over its cap, an address over its cap, and the server when full', () => {
    const l = new ConnectionLimiter(caps);
    expect(code(l.admit(ann, '10.0.0.1'))).toBe('ok');
    expect(code(l.admit(ann, '10.0.0.2'))).toBe('ok');
    expect(code(l.admit(ann, '10.0.0.3'))).toBe('429 too_many_user_connections');
    expect(code(l.admit(bo, '10.0.0.1'))).toBe('ok');
    expect(code(l.admit(bo, '::ffff:10.0.0.1'))).toBe('429 too_many_address_connections');
    expect(code(l.admit(bo, '10.0.0.4'))).toBe('503 unavailable');
    expect(l.counts()).toEqual({ users: 3, admins: 0 });
  });

  it('never counts the admin under the user caps, and caps the admin apart', () => {
    const l = new ConnectionLimiter(caps);
    for (const a of ['10.0.0.1', '10.0.0.1', '10.0.0.2']) l.admit(a === '10.0.0.2' ? bo : ann, a);
    expect(code(l.admit(admin, '10.0.0.1'))).toBe('ok');
    expect(code(l.admit(admin, '10.0.0.1'))).toBe('429 too_many_admin_connections');
  });

  it('gives a place back once, however often release is called', () => {
    const l = new ConnectionLimiter(caps);
    const release = l.admit(ann, '10.0.0.1');
    if (release instanceof UiRequestError) throw release;
    l.admit(ann, '10.0.0.1');
    release();
    release();
    expect(l.counts().users).toBe(1);
    expect(code(l.admit(ann, '10.0.0.1'))).toBe('ok');
    expect(code(l.admit(ann, '10.0.0.1'))).toBe('429 too_many_user_connections');
  });
});

let h: Harness;
const open: RawClient[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) c.ws.terminate();
  await h?.server.close();
});

async function connect(token: string): Promise<RawClient> {
  const c = await RawClient.open(h.server.wsUrl, token);
  open.push(c);
  return c;
}

/** The status and error code an upgrade was refused with. */
function refusal(token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(h.server.wsUrl, [SUBPROTOCOL], {
      headers: { authorization: `Bearer ${token}` },
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => {
        body += String(c);
      });
      res.on('end', () => {
        resolve(
          `${res.statusCode} ${(JSON.parse(body) as { error: { code: string } }).error.code}`,
        );
        ws.terminate();
      });
    });
    ws.on('open', () => reject(new Error('upgrade was accepted')));
    ws.on('error', () => {});
  });
}

describe('the upgrade ladder', () => {
  it('refuses one user over its cap with 429 while another user and the admin connect', async () => {
    h = await startHarness({ maxConnectionsPerUser: 3 });
    for (let i = 0; i < 3; i++) await connect(ALICE);
    expect(await refusal(ALICE)).toBe('429 too_many_user_connections');
    await connect(BOB);
    await connect(ADMIN);
  });

  it('refuses an address over its cap with 429, the admin still connects from it', async () => {
    h = await startHarness({ maxConnectionsPerAddress: 2 });
    await connect(ALICE);
    await connect(BOB);
    expect(await refusal(ALICE)).toBe('429 too_many_address_connections');
    await connect(ADMIN);
  });

  it('refuses users with 503 when the server is full; the admin is never locked out', async () => {
    h = await startHarness({ maxConnections: 2, maxAdminConnections: 2 });
    await connect(ALICE);
    await connect(ALICE);
    expect(await refusal(BOB)).toBe('503 unavailable');
    await connect(ADMIN);
    await connect(ADMIN);
    expect(await refusal(ADMIN)).toBe('429 too_many_admin_connections');
  });

  it('gives the place back when the socket closes', async () => {
    h = await startHarness({ maxConnectionsPerUser: 1 });
    const first = await connect(ALICE);
    expect(await refusal(ALICE)).toBe('429 too_many_user_connections');
    first.close();
    await first.closed;
    // The server sees the TCP close a moment after the client does.
    for (let i = 0; i < 50 && h.server.connections() > 0; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    await connect(ALICE);
  });
});
