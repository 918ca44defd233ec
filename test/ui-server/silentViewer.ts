/**
 * A WebSocket client that upgrades and then goes silent: it reads nothing
 * and answers nothing, close frames included (a laptop asleep, a cut
 * network, a hostile client). For the tests of a server's close grace.
 */
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';

/** Upgrades `path` on 127.0.0.1:`port` offering `protocols`, then stops reading; destroy it when done. */
export async function silentViewer(port: number, path: string, protocols: string): Promise<Socket> {
  const silent = connect(port, '127.0.0.1');
  silent.on('error', () => {});
  const upgraded = new Promise<string>((resolve) =>
    silent.once('data', (d: Buffer) => {
      silent.pause();
      resolve(String(d).split('\r\n')[0] ?? '');
    }),
  );
  silent.write(
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Protocol: ${protocols}\r\n\r\n`,
  );
  expect(await upgraded).toContain(' 101 ');
  return silent;
}
