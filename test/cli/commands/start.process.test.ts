/**
 * `roundtable start` as a real child process, stopped by SIGTERM while
 * board and inspector clients hold sockets that never answer a close frame
 * (a laptop asleep with the board open, a cut network, a hostile client).
 * Before, the listener's close waited for them (ws gives each 30 s) until
 * `shutdownMs` ended the process with exit 6; now they are cut after the
 * board's `closeGraceMs` and the process exits 0 on its own, nothing left open.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CliProcess, freePort, type LogRecord } from '../cliProcess.js';

let dir: string;
let node: CliProcess | undefined;
const sockets: Socket[] = [];
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-cli-exit-'));
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await node?.kill();
  rmSync(dir, { recursive: true, force: true });
});

/** An upgraded socket that then reads nothing and answers nothing. */
function silentSocket(port: number, path: string, protocols: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      s.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Protocol: ${protocols}\r\n\r\n`,
      );
    });
    sockets.push(s);
    s.on('error', reject);
    s.once('data', (d: Buffer) => {
      const status = String(d).split('\r\n')[0] ?? '';
      // Upgraded; from now on it never reads again.
      s.pause();
      if (status.includes(' 101 ')) resolve(s);
      else reject(new Error(`not upgraded: ${status}`));
    });
  });
}

describe('start as a process', () => {
  it('exits 0 promptly after SIGTERM although board and inspector sockets never answer their close frame', async () => {
    const port = await freePort();
    // --import tsx: the source itself, as `npm start` runs it.
    node = new CliProcess('--import', [
      'tsx',
      'src/cli/main.ts',
      'start',
      '--data-dir',
      dir,
      '--port',
      String(port),
      '--backend',
      'local',
      '--users',
      'u1',
      '--log-level',
      'debug',
    ]);
    await node.waitFor((r) => r.msg === 'ready', 60_000, 'the ready record');
    const admin = (JSON.parse(readFileSync(join(dir, 'tokens.json'), 'utf8')) as { admin: string })
      .admin;
    await silentSocket(port, '/ws', `roundtable.board.v1, roundtable.bearer.${admin}`);
    await silentSocket(port, '/inspect/ws', `roundtable.inspect.v1, roundtable.bearer.${admin}`);

    node.signal('SIGTERM');
    // The default shutdownMs is 15 s: exit 6 at 15 s was the bug.
    expect(await node.exitCode(10_000)).toBe(0);
    // It ended because nothing held it, not by main.ts's 2 s fallback (which says what was open).
    expect(node.stderr).not.toContain('still open');
    expect(node.records.some((r: LogRecord) => r.msg === 'stopped: still open')).toBe(true);
  }, 90_000);
});
