import { fc, test } from '@fast-check/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardCard } from '../../src/board/boardPort.js';
import type { ServerFrame } from '../../src/board/boardProtocol.js';
import {
  ADMIN,
  ALICE,
  applyFrames,
  BOB,
  byTask,
  type Harness,
  RawClient,
  spec,
  startHarness,
} from './wsHarness.js';

let h: Harness;
const clients: RawClient[] = [];
async function open(token: string, opts?: { autoPong?: boolean }) {
  const c = await RawClient.open(h.server.wsUrl, token, opts);
  clients.push(c);
  return c;
}
async function subscribed(token: string) {
  const c = await open(token);
  c.send({ type: 'subscribe', v: 1 });
  const snapshot = await c.next('snapshot');
  return { c, snapshot };
}

afterEach(async () => {
  for (const c of clients.splice(0)) c.ws.terminate();
  await h?.server.close();
});

describe('subscribe', () => {
  it('sends hello, then a snapshot of only the user’s cards stamped with the view’s seq', async () => {
    h = await startHarness();
    await h.board.createTask('alice', spec('a1'));
    await h.board.createTask('bob', spec('b1'));
    const { snapshot } = await subscribed(ALICE);
    // Seq counts this view's patches only: bob's card never entered alice's stream.
    expect(snapshot.seq).toBe(1);
    expect(snapshot.cards.map((c) => c.title)).toEqual(['a1']);
    expect(snapshot.epoch).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('gives the admin every user’s cards', async () => {
    h = await startHarness();
    await h.board.createTask('alice', spec('a1'));
    await h.board.createTask('bob', spec('b1'));
    const { snapshot } = await subscribed(ADMIN);
    expect(snapshot.cards.map((c) => c.title).sort()).toEqual(['a1', 'b1']);
  });

  it('streams patches in order, each seq one more than the last, and ends equal to the source', async () => {
    h = await startHarness();
    const { c, snapshot } = await subscribed(ALICE);
    const state = { seq: snapshot.seq, cards: new Map<string, BoardCard>() };
    for (let i = 0; i < 5; i++) await h.board.createTask('alice', spec(`a${i}`));
    h.board.output('t1', 'compiling');
    h.board.finish('t1', 0);
    h.board.finish('t2', 3);
    const frames = await c.sync();
    expect(frames.every((f) => f.type === 'patch')).toBe(true);
    applyFrames(state, frames);
    expect(byTask([...state.cards.values()])).toEqual(byTask(h.board.cards('alice')));
    // Rule 4: waiting and holding are told apart on every card.
    for (const card of state.cards.values()) {
      expect(card.queued !== null && card.running !== null).toBe(false);
    }
    expect(state.cards.get('t5')?.queued?.position).toBe(1);
  });

  it('emits moved positions: when the head of the line leaves, everyone behind moves up', async () => {
    h = await startHarness();
    for (let i = 0; i < 5; i++) await h.board.createTask('alice', spec(`a${i}`));
    const { c } = await subscribed(ALICE);
    await h.board.cancel('alice', 't3');
    const patches = (await c.sync()) as Array<Extract<ServerFrame, { type: 'patch' }>>;
    const positions = patches.map((p) => [p.card.taskId, p.card.queued?.position ?? null]);
    expect(positions).toEqual([
      ['t3', null],
      ['t4', 1],
      ['t5', 2],
    ]);
  });
});

describe('isolation', () => {
  it('never sends a user another user’s card, while the admin sees both', async () => {
    h = await startHarness();
    const alice = (await subscribed(ALICE)).c;
    const bob = (await subscribed(BOB)).c;
    const admin = (await subscribed(ADMIN)).c;
    await h.board.createTask('alice', spec('a'));
    await h.board.createTask('bob', spec('b'));
    await h.board.createTask('bob', spec('b2'));
    const users = (frames: ServerFrame[]) =>
      frames.flatMap((f) => (f.type === 'patch' ? [f.card.userId] : []));
    expect(users(await alice.sync())).toEqual(['alice']);
    expect(users(await bob.sync())).toEqual(['bob', 'bob']);
    expect(users(await admin.sync())).toEqual(['alice', 'bob', 'bob']);
  });
});

describe('resume', () => {
  it('replays exactly the missed patches after a reconnect with the last seq', async () => {
    h = await startHarness();
    const first = await subscribed(ALICE);
    await h.board.createTask('alice', spec('a'));
    const before = await first.c.sync();
    const state = { seq: first.snapshot.seq, cards: new Map<string, BoardCard>() };
    applyFrames(state, before);
    first.c.ws.terminate();
    await h.board.createTask('alice', spec('b'));
    await h.board.createTask('bob', spec('not mine'));
    h.board.output('t1', 'line');
    const again = await open(ALICE);
    again.send({
      type: 'subscribe',
      v: 1,
      resume: { epoch: first.snapshot.epoch, seq: state.seq },
    });
    const resumed = await again.next('resumed');
    expect(resumed).toEqual({ type: 'resumed', epoch: first.snapshot.epoch, seq: state.seq });
    const missed = await again.sync();
    expect(missed.map((f) => (f.type === 'patch' ? f.seq : -1))).toEqual([2, 3]);
    applyFrames(state, missed);
    expect(byTask([...state.cards.values()])).toEqual(byTask(h.board.cards('alice')));
  });

  it('sends a fresh snapshot when the buffer no longer holds the gap', async () => {
    h = await startHarness({ resumeBuffer: 2 });
    const first = await subscribed(ALICE);
    for (let i = 0; i < 4; i++) await h.board.createTask('alice', spec(`a${i}`));
    const again = await open(ALICE);
    again.send({ type: 'subscribe', v: 1, resume: { epoch: first.snapshot.epoch, seq: 0 } });
    const snap = await again.next('snapshot');
    expect(snap.cards).toHaveLength(4);
    expect(snap.seq).toBe(4);
  });

  it('sends a fresh snapshot for another epoch (a restarted server) or a seq from the future', async () => {
    h = await startHarness();
    const c = await open(ALICE);
    c.send({ type: 'subscribe', v: 1, resume: { epoch: 'old-epoch', seq: 0 } });
    expect((await c.next('snapshot')).seq).toBe(0);
    const { snapshot } = await subscribed(ALICE);
    c.send({ type: 'subscribe', v: 1, resume: { epoch: snapshot.epoch, seq: 99 } });
    expect((await c.next('snapshot')).seq).toBe(0);
  });
});

describe('bad input: a typed error frame, and the connection carries on', () => {
  const cases: Array<[string, string | object, string]> = [
    ['malformed JSON', '{"type": "subscribe",', 'bad_json'],
    ['a non-object', '42', 'unknown_type'],
    ['an unknown type', { type: 'delete_everything' }, 'unknown_type'],
    ['a subscribe of the wrong shape', { type: 'subscribe', v: 'one' }, 'bad_frame'],
    ['unknown keys', { type: 'subscribe', v: 1, admin: true }, 'bad_frame'],
    [
      'a bad resume point',
      { type: 'subscribe', v: 1, resume: { epoch: '', seq: -1 } },
      'bad_frame',
    ],
    ['another protocol version', { type: 'subscribe', v: 2 }, 'unsupported_version'],
  ];
  it.each(cases)('%s', async (_name, frame, code) => {
    h = await startHarness();
    const c = await open(ALICE);
    c.send(frame);
    const error = await c.next('error');
    expect(error.code).toBe(code);
    expect(error.message.length).toBeGreaterThan(0);
    expect(await c.sync()).toEqual([]);
  });

  it('a binary frame', async () => {
    h = await startHarness();
    const c = await open(ALICE);
    c.ws.send(Buffer.from([1, 2, 3]));
    expect((await c.next('error')).code).toBe('bad_frame');
  });

  it('an oversized frame closes only that socket, with 1009', async () => {
    h = await startHarness({ maxPayload: 1024 });
    const bystander = (await subscribed(BOB)).c;
    const c = await open(ALICE);
    c.send({ type: 'ping', id: 'x'.repeat(2000) });
    expect((await c.closed).code).toBe(1009);
    await h.board.createTask('bob', spec('still here'));
    expect((await bystander.sync()).map((f) => f.type)).toEqual(['patch']);
  });

  it('a flood: rate_limited once, dropped frames, then close 4029; others carry on', async () => {
    h = await startHarness({ floodBurst: 5, floodPerSecond: 1, floodStrikes: 3 });
    const bystander = (await subscribed(BOB)).c;
    const c = await open(ALICE);
    for (let i = 0; i < 5; i++) c.send({ type: 'ping', id: `${i}` });
    for (let i = 0; i < 5; i++) expect(await c.next('pong')).toEqual({ type: 'pong', id: `${i}` });
    c.send({ type: 'ping', id: 'over' });
    expect((await c.next('error')).code).toBe('rate_limited');
    // The bucket refills with the (manual) clock: one more frame a second.
    h.clock.advance(1000);
    expect(await c.sync()).toEqual([]);
    for (let i = 0; i < 5; i++) c.send({ type: 'ping', id: `flood${i}` });
    expect((await c.closed).code).toBe(4029);
    expect(c.frames.filter((f) => f.type === 'pong')).toEqual([]);
    expect(await bystander.sync()).toEqual([]);
  });
});

describe('heartbeat', () => {
  it('drops a client that stops answering pings, keeps one that answers', async () => {
    h = await startHarness({ heartbeatMs: 1000 });
    const live = await open(ALICE);
    const dead = await open(BOB, { autoPong: false });
    const pinged = new Promise((resolve) => live.ws.once('ping', resolve));
    h.clock.advance(1000);
    await pinged;
    // The pong went out before the ping event fired; a round trip proves it arrived.
    await live.sync();
    expect(h.server.connections()).toBe(2);
    h.clock.advance(1000);
    expect((await dead.closed).code).toBe(1006);
    expect(h.server.connections()).toBe(1);
    expect(await live.sync()).toEqual([]);
  });
});

describe('model: any sequence of changes reaches every view in order, filtered', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('create'), user: fc.constantFrom('alice', 'bob', 'carol') }),
    fc.record({ kind: fc.constant('finish'), pick: fc.nat(), code: fc.constantFrom(0, 1) }),
    fc.record({ kind: fc.constant('cancel'), pick: fc.nat() }),
    fc.record({ kind: fc.constant('output'), pick: fc.nat() }),
    fc.record({ kind: fc.constant('drop') }),
  );
  test.prop([fc.array(op, { maxLength: 25 })], { numRuns: 12 })(
    'views equal the source after replaying ops, with a reconnect-and-resume in between',
    async (ops) => {
      h = await startHarness({ resumeBuffer: 8 });
      const views = [
        { token: ALICE, userId: 'alice' as string | null },
        { token: BOB, userId: 'bob' },
        { token: ADMIN, userId: null },
      ];
      const live = [];
      for (const v of views) {
        const { c, snapshot } = await subscribed(v.token);
        live.push({
          ...v,
          c,
          epoch: snapshot.epoch,
          state: { seq: snapshot.seq, cards: new Map() },
        });
      }
      for (const o of ops) {
        const all = h.board.cards(null);
        const running = all.filter((c) => c.running);
        const open_ = all.filter((c) => c.column === 'queued' || c.column === 'running');
        if (o.kind === 'create') await h.board.createTask(o.user, spec('x'));
        else if (o.kind === 'finish' && running.length > 0)
          h.board.finish(running[o.pick % running.length]!.taskId, o.code);
        else if (o.kind === 'cancel' && open_.length > 0)
          await h.board.cancel(null, open_[o.pick % open_.length]!.taskId);
        else if (o.kind === 'output' && running.length > 0)
          h.board.output(running[o.pick % running.length]!.taskId, 'out');
        else if (o.kind === 'drop') {
          const v = live[0]!;
          applyFrames(v.state, await v.c.sync());
          v.c.ws.terminate();
          v.c = await open(v.token);
          v.c.send({ type: 'subscribe', v: 1, resume: { epoch: v.epoch, seq: v.state.seq } });
        }
      }
      for (const v of live) {
        const frames = await v.c.sync();
        applyFrames(v.state, frames);
        expect(byTask([...v.state.cards.values()])).toEqual(byTask(h.board.cards(v.userId)));
      }
      for (const c of clients.splice(0)) c.ws.terminate();
      await h.server.close();
    },
  );
});
