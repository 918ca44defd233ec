/**
 * A TCP proxy in front of the Postgres server whose traffic can be frozen:
 * `freeze()` stops reading either side of every connection, without closing
 * anything, so both ends see a socket that is open and silent (a cable cut,
 * a partition: no FIN, no RST). `thaw()` lets the buffered bytes through.
 * `retarget()` sends the connections made from then on elsewhere (a DNS
 * switch: the same address now leads to, say, a pooler), and `cut()` closes
 * every connection through it now, so its clients connect again.
 */
import net from 'node:net';

export interface FreezableProxy {
  port: number;
  freeze(): void;
  thaw(): void;
  /** Connections made from now on go to `target`; those open stay where they are. */
  retarget(target: { host: string; port: number }): void;
  /** Closes every connection through the proxy (both sides see the socket close). */
  cut(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: {
  host: string;
  port: number;
}): Promise<FreezableProxy> {
  const pairs = new Set<[net.Socket, net.Socket]>();
  let frozen = false;
  let to = target;
  const flow = ([a, b]: [net.Socket, net.Socket]) => {
    a.pipe(b);
    b.pipe(a);
  };
  // Unpiped, so a 'drain' cannot resume a frozen side behind our back.
  const stop = ([a, b]: [net.Socket, net.Socket]) => {
    a.unpipe(b);
    b.unpipe(a);
    a.pause();
    b.pause();
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(to.port, to.host);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    if (frozen) for (const s of pair) s.pause();
    else flow(pair);
    // While frozen nothing crosses, not even a close: the other end keeps
    // its socket open (the server holds the session) until close().
    const end = () => {
      if (frozen) return;
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    freeze() {
      frozen = true;
      for (const pair of pairs) stop(pair);
    },
    thaw() {
      frozen = false;
      for (const pair of pairs) flow(pair);
    },
    retarget(next) {
      to = next;
    },
    cut() {
      for (const pair of [...pairs]) {
        pairs.delete(pair);
        for (const s of pair) s.destroy();
      }
    },
    async close() {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      pairs.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
