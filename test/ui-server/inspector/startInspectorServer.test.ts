/**
 * The standalone inspector server's stop: a viewer that never answers its
 * close frame (a laptop asleep with the inspector open, a cut network) is
 * cut after `closeGraceMs`, as the board's are, instead of holding
 * `close()` for ws's 30 s, past a node's own shutdown deadline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InspectorConfigError } from '../../../src/ui-server/inspector/inspectorOptions.js';
import {
  BEARER_SUBPROTOCOL_PREFIX,
  INSPECT_SUBPROTOCOL,
  INSPECT_WS_PATH,
} from '../../../src/ui-server/inspector/inspectorProtocol.js';
import {
  type InspectorServer,
  startInspectorServer,
} from '../../../src/ui-server/inspector/startInspectorServer.js';
import { silentViewer } from '../silentViewer.js';
import { startWorkload, type Workload } from './fixtures.js';

const ADMIN = 'admin-token-0123456789';

let w: Workload | undefined;
let server: InspectorServer | undefined;
afterEach(async () => {
  await server?.close();
  await w?.root.shutdown();
  server = undefined;
  w = undefined;
});

describe('startInspectorServer close', () => {
  it('cuts a viewer that never answers its close frame after closeGraceMs, so close() ends', async () => {
    w = await startWorkload();
    const s = await startInspectorServer({
      inspector: w.inspector,
      tokens: { admin: ADMIN },
      port: 0,
      host: '127.0.0.1',
      closeGraceMs: 1_000,
    });
    server = s;
    const silent = await silentViewer(
      s.port,
      INSPECT_WS_PATH,
      `${INSPECT_SUBPROTOCOL}, ${BEARER_SUBPROTOCOL_PREFIX}${ADMIN}`,
    );
    let done = false;
    const closing = s.close().then(() => {
      done = true;
    });
    await new Promise((r) => setTimeout(r, 100));
    // Within the grace the server waits for the close handshake.
    expect(done).toBe(false);
    w.clock.increment(1_000);
    const deadline = new Promise<'late'>((r) => setTimeout(() => r('late'), 5_000).unref());
    expect(await Promise.race([closing.then(() => 'closed' as const), deadline])).toBe('closed');
    silent.destroy();
  });

  it.each([-1, 1.5, 2_147_483_648, Number.NaN])(
    'refuses a closeGraceMs of %d before listening, naming it',
    async (closeGraceMs) => {
      w = await startWorkload();
      const start = startInspectorServer({
        inspector: w.inspector,
        tokens: { admin: ADMIN },
        port: 0,
        host: '127.0.0.1',
        closeGraceMs,
      });
      await expect(start).rejects.toBeInstanceOf(InspectorConfigError);
      await expect(start).rejects.toMatchObject({
        code: 'INSPECTOR_CONFIG',
        field: 'closeGraceMs',
      });
    },
  );
});
