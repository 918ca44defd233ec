import { afterEach, describe, expect, it } from 'vitest';
import type { StoredOutput } from '../../src/board/boardPort.js';
import * as gateModule from '../../src/ui-server/outputReadGate.js';
import { runDocExamples } from '../support/docExamples.js';
import { ADMIN, ALICE, BOB, type Harness, spec, startHarness } from './wsHarness.js';

runDocExamples(new URL('../../src/ui-server/outputReadGate.ts', import.meta.url), gateModule);

let h: Harness;
afterEach(async () => {
  await h?.server.close();
});

const get = (path: string, token: string) =>
  fetch(`${h.server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe('output reads in flight per user', () => {
  it('refuses a user past maxOutputReadsPerUser with 429, others still read, and frees the places', async () => {
    h = await startHarness({ maxOutputReadsPerUser: 2 });
    for (const token of [ALICE, BOB]) {
      await fetch(`${h.server.url}/api/tasks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(spec('x')),
      });
    }
    h.board.output('t1', 'alice line');
    h.board.finish('t1', 0);
    h.board.output('t2', 'bob line');
    h.board.finish('t2', 0);
    // Alice's reads hang in the store until let go.
    const held: Array<() => void> = [];
    const read = h.board.taskOutput.bind(h.board);
    h.board.taskOutput = async (actor, taskId, sessionId): Promise<StoredOutput | null> => {
      if (actor === 'alice') await new Promise<void>((resolve) => held.push(resolve));
      return read(actor, taskId, sessionId);
    };
    const page = '/api/tasks/t1/sessions/s1/output?count=1';
    const first = [get(page, ALICE), get('/api/tasks/t1/sessions/s1/output.txt', ALICE)];
    await expect.poll(() => held.length).toBe(2);
    const refused = await get(page, ALICE);
    expect([refused.status, refused.headers.get('retry-after')]).toEqual([429, '1']);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe(
      'too_many_output_reads',
    );
    // Bob and the admin have places of their own.
    expect((await get('/api/tasks/t2/sessions/s2/output?count=1', BOB)).status).toBe(200);
    const admin = get(page, ADMIN);
    expect((await admin).status).toBe(200);
    for (const release of held.splice(0)) release();
    expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
    const again = get(page, ALICE);
    await expect.poll(() => held.length).toBe(1);
    held.splice(0)[0]?.();
    expect((await again).status).toBe(200);
  });
});
