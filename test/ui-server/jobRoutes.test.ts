import { expect, it } from 'vitest';
import * as mod from '../../src/ui-server/jobRoutes.js';
import { downloadName, parsePageQuery } from '../../src/ui-server/jobRoutes.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/jobRoutes.ts', import.meta.url), mod);

it('refuses page queries it does not know, and names downloads safely', () => {
  expect(parsePageQuery(new URLSearchParams('from=3&count=10'))).toEqual({ from: 3, count: 10 });
  expect(parsePageQuery(new URLSearchParams(''))).toEqual({ from: undefined, count: 1000 });
  for (const q of ['from=-1', 'count=5001', 'count=x', 'tail=3']) {
    expect(parsePageQuery(new URLSearchParams(q))).toMatchObject({
      status: 400,
      code: 'bad_request',
    });
  }
  expect(downloadName('t"1', 's\r\n1')).toBe('t_1-s__1.log');
});

it('a download whose client stops reading is given up on at its stall deadline', async () => {
  const { createServer } = await import('node:http');
  const { connect } = await import('node:net');
  const { TestClock } = await import('../../src/testing/TestClock.js');
  const clock = new TestClock();
  const part = Buffer.alloc(1024 * 1024, 'a');
  let sent = 0;
  const commands = {
    async taskOutputBytes() {
      return (async function* () {
        for (let i = 0; i < 64; i++) {
          sent += 1;
          yield part;
        }
      })();
    },
  } as unknown as Parameters<typeof mod.sendDownload>[1];
  let finished: Promise<boolean> | undefined;
  const server = createServer((_req, res) => {
    finished = mod.sendDownload(
      res,
      commands,
      { viewer: 'admin', taskId: 't', sessionId: 's' } as never,
      clock,
    );
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  const client = connect(port, '127.0.0.1');
  try {
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    // Never read: the socket's buffers fill and the server waits for a drain.
    client.pause();
    const until = Date.now() + 10_000;
    while (clock.pending() === 0) {
      if (Date.now() > until) throw new Error('the download never waited for its client');
      await new Promise((r) => setTimeout(r, 10));
    }
    expect(sent).toBeLessThan(64);
    clock.fireNext(clock.now() + mod.DOWNLOAD_STALL_MS);
    expect(await finished).toBe(true);
    expect(sent).toBeLessThan(64);
    // The server ended the socket: read on, and it closes short of the whole 64 MiB.
    let received = 0;
    client.on('data', (d: Buffer) => {
      received += d.length;
    });
    client.resume();
    await new Promise((r) => client.once('close', r));
    expect(received).toBeLessThan(64 * part.length);
  } finally {
    client.destroy();
    await new Promise((r) => server.close(r));
  }
});
