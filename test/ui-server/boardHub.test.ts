import { fc, test } from '@fast-check/vitest';
import { afterEach, describe, expect, it } from 'vitest';
import type { BoardCard } from '../../src/board/boardPort.js';
import type { ServerFrame } from '../../src/board/boardProtocol.js';
import { FakeBoard } from '../support/fakeBoard.js';
import {
  ADMIN,
  ALICE,
  applyFrames,
  BOB,
  byTask,
  expectedWindow,
  type Harness,
  RawClient,
  spec,
  startHarness,
  updatedCards,
} from './wsHarness.js';

type WindowState = Parameters<typeof applyFrames>[0];
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

/** Polls `check` every 5 ms, failing after 5 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
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

  it('sends updates in order, seq growing, and ends equal to the source', async () => {
    h = await startHarness();
    const { c, snapshot } = await subscribed(ALICE);
    const state = { seq: snapshot.seq, cards: new Map<string, BoardCard>() };
    for (let i = 0; i < 5; i++) await h.board.createTask('alice', spec(`a${i}`));
    h.board.output('t1', 'compiling');
    h.board.finish('t1', 0);
    h.board.finish('t2', 3);
    const frames = await c.sync();
    expect(frames.every((f) => f.type === 'update')).toBe(true);
    applyFrames(state, frames);
    expect(byTask([...state.cards.values()])).toEqual(byTask(h.board.cards('alice')));
    // Rule 4: waiting and holding are told apart on every card.
    for (const card of state.cards.values()) {
      expect(card.queued !== null && card.running !== null).toBe(false);
    }
    expect(state.cards.get('t5')?.queued?.position).toBe(1);
  });

  it('sends moved positions in one update: when the head of the line leaves, everyone behind moves up', async () => {
    h = await startHarness();
    for (let i = 0; i < 5; i++) await h.board.createTask('alice', spec(`a${i}`));
    const { c } = await subscribed(ALICE);
    await h.board.cancel('alice', 't3');
    const frames = await c.sync();
    expect(frames).toHaveLength(1);
    // The cancelled card whole; the cards whose position alone moved as positions.
    const positions = byTask(updatedCards(frames)).map((p) => [
      p.taskId,
      p.queued?.position ?? null,
    ]);
    expect(positions).toEqual([['t3', null]]);
    expect(frames[0]).toMatchObject({ positions: { t4: 1, t5: 2 } });
    expect(frames[0]).toMatchObject({ counts: { queued: 2, running: 2, done: 0, failed: 1 } });
  });
});

describe('retention', () => {
  it('a card that leaves the board is removed from every window that showed it, counts and users with it', async () => {
    h = await startHarness();
    await h.board.createTask('alice', spec('a1'));
    await h.board.createTask('alice', spec('a2'));
    await h.board.createTask('bob', spec('b1'));
    h.board.finish('t1', 0);
    h.board.finish('t3', 0);
    const alice = await subscribed(ALICE);
    const admin = await subscribed(ADMIN);
    expect(admin.snapshot.users).toEqual(['alice', 'bob']);
    const state = { seq: alice.snapshot.seq, cards: new Map<string, BoardCard>() };
    for (const card of alice.snapshot.cards) state.cards.set(card.taskId, card);
    h.board.forget(['t1', 't3']);
    const frames = await alice.c.sync();
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ removed: ['t1'], counts: { done: 0 } });
    applyFrames(state, frames);
    expect(byTask([...state.cards.values()])).toEqual(byTask(h.board.cards('alice')));
    const adminFrames = await admin.c.sync();
    expect(adminFrames).toHaveLength(1);
    expect((adminFrames[0] as { removed: string[] }).removed.sort()).toEqual(['t1', 't3']);
    // Bob's only card went: he is no longer a user of the admin's filter.
    expect(adminFrames[0]).toMatchObject({ users: ['alice'] });
    // A new socket's snapshot has none of them.
    const again = await subscribed(ADMIN);
    expect(again.snapshot.cards.map((c) => c.taskId)).toEqual(['t2']);
  });
});

describe('watching', () => {
  it('watches the source while a socket is open, and only then', async () => {
    h = await startHarness();
    // The hub, the stats and the inspector's index subscribe passive.
    expect(h.board.watchers).toBe(0);
    const a = await open(ALICE);
    expect(h.board.watchers).toBe(1);
    const b = await open(BOB);
    // One watch for the hub, however many sockets.
    expect(h.board.watchers).toBe(1);
    a.close();
    await a.closed;
    await until('alice detached', () => h.server.connections() === 1);
    expect(h.board.watchers).toBe(1);
    b.ws.terminate();
    await until('no watch left', () => h.board.watchers === 0);
    const c = await open(ADMIN);
    expect(h.board.watchers).toBe(1);
    await h.server.close();
    expect(h.board.watchers).toBe(0);
    c.ws.terminate();
  });
});

describe('windows', () => {
  it('sends every count but only the cards of the window, and keeps positions exact as the line moves', async () => {
    h = await startHarness();
    for (let i = 0; i < 30; i++) await h.board.createTask('alice', spec(`a${i}`));
    const c = await open(ALICE);
    const none = { offset: 0, limit: 0 };
    const window = {
      columns: { queued: { offset: 10, limit: 5 }, running: none, done: none, failed: none },
    };
    c.send({ type: 'subscribe', v: 1, window });
    const snapshot = await c.next('snapshot');
    expect(snapshot.counts).toEqual({ queued: 28, running: 2, done: 0, failed: 0 });
    const queued = snapshot.cards.filter((x) => x.queued !== null);
    expect(queued.map((x) => x.queued!.position)).toEqual([11, 12, 13, 14, 15]);
    const state = { seq: snapshot.seq, cards: new Map(snapshot.cards.map((x) => [x.taskId, x])) };
    // A card far behind the window changes: nothing to send but nothing moved either.
    await h.board.cancel('alice', 't30');
    const far = await c.sync();
    expect(updatedCards(far)).toEqual([]);
    expect(far.map((f) => f.type === 'update' && f.counts?.failed)).toEqual([1]);
    applyFrames(state, far);
    // The head leaves: the window slides, one card in, one out, four renumbered.
    h.board.finish('t1', 0);
    const slid = await c.sync();
    applyFrames(state, slid);
    const got = byTask([...state.cards.values()]);
    expect(got).toEqual(expectedWindow(h.board.cards('alice'), window).cards);
    expect(updatedCards(slid).filter((x) => x.column === 'queued')).toHaveLength(1);
    expect(slid.map((f) => f.type === 'update' && Object.keys(f.positions ?? {}).length)).toEqual([
      4,
    ]);
  });

  it('a watched task is sent wherever it is, and only if it is the user’s', async () => {
    h = await startHarness();
    await h.board.createTask('bob', spec('bob’s'));
    for (let i = 0; i < 3; i++) await h.board.createTask('alice', spec(`a${i}`));
    const none = { offset: 0, limit: 0 };
    const columns = { queued: none, running: none, done: none, failed: none };
    const c = await open(ALICE);
    c.send({ type: 'subscribe', v: 1, window: { columns, watch: ['t4', 't1'] } });
    const snapshot = await c.next('snapshot');
    expect(snapshot.cards.map((x) => x.taskId)).toEqual(['t4']);
    h.board.output('t1', 'not alice’s');
    h.board.output('t2', 'not watched');
    await h.board.cancel('alice', 't4');
    expect(updatedCards(await c.sync()).map((x) => [x.taskId, x.status])).toEqual([
      ['t4', 'cancelled'],
    ]);
  });

  it('a filter counts and cuts under it; subscribing again replaces the window', async () => {
    h = await startHarness();
    for (let i = 0; i < 12; i++)
      await h.board.createTask('alice', spec(i % 3 === 0 ? `api ${i}` : `x ${i}`));
    const c = await open(ALICE);
    c.send({ type: 'subscribe', v: 1, window: { filter: { text: 'API' } } });
    const first = await c.next('snapshot');
    expect(first.counts).toEqual({ queued: 3, running: 1, done: 0, failed: 0 });
    expect(first.cards.every((x) => x.title.startsWith('api'))).toBe(true);
    c.send({ type: 'subscribe', v: 1, window: { filter: { status: 'running' } } });
    const second = await c.next('snapshot');
    expect(second.cards.map((x) => x.taskId).sort()).toEqual(['t1', 't2']);
    await h.board.createTask('alice', spec('api 99'));
    // The new card is no running one: at most a count moves, no card is sent.
    expect(updatedCards(await c.sync())).toEqual([]);
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
    const users = (frames: ServerFrame[]) => updatedCards(frames).map((c) => c.userId);
    expect(users(await alice.sync())).toEqual(['alice']);
    expect(users(await bob.sync())).toEqual(['bob', 'bob']);
    expect(users(await admin.sync())).toEqual(['alice', 'bob', 'bob']);
  });

  it('a user’s filter on another user finds nothing; their counts are their own', async () => {
    h = await startHarness();
    await h.board.createTask('bob', spec('b'));
    await h.board.createTask('alice', spec('a'));
    const c = await open(ALICE);
    c.send({ type: 'subscribe', v: 1, window: { filter: { user: 'bob' } } });
    const snap = await c.next('snapshot');
    expect([snap.cards, snap.counts, snap.users]).toEqual([
      [],
      { queued: 0, running: 0, done: 0, failed: 0 },
      ['alice'],
    ]);
    const admin = await open(ADMIN);
    admin.send({ type: 'subscribe', v: 1, window: { filter: { user: 'bob' } } });
    const all = await admin.next('snapshot');
    expect([all.cards.map((x) => x.userId), all.users]).toEqual([['bob'], ['alice', 'bob']]);
  });
});

describe('reconnect', () => {
  it('a new socket subscribing gets a fresh snapshot of the window, with what changed meanwhile', async () => {
    h = await startHarness();
    const first = await subscribed(ALICE);
    await h.board.createTask('alice', spec('a'));
    await first.c.sync();
    first.c.ws.terminate();
    await h.board.createTask('alice', spec('b'));
    await h.board.createTask('bob', spec('not mine'));
    h.board.output('t1', 'line');
    const again = await subscribed(ALICE);
    expect(again.snapshot.seq).toBeGreaterThan(first.snapshot.seq);
    expect(again.snapshot.epoch).toBe(first.snapshot.epoch);
    expect(byTask(again.snapshot.cards)).toEqual(byTask(h.board.cards('alice')));
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
      'a resume point (protocol v1 has none)',
      { type: 'subscribe', v: 1, resume: { epoch: 'e', seq: 1 } },
      'bad_frame',
    ],
    [
      'a negative offset',
      { type: 'subscribe', v: 1, window: { columns: { queued: { offset: -1, limit: 5 } } } },
      'bad_frame',
    ],
    [
      'a limit over 200',
      { type: 'subscribe', v: 1, window: { columns: { done: { offset: 0, limit: 201 } } } },
      'bad_frame',
    ],
    [
      'a fractional limit',
      { type: 'subscribe', v: 1, window: { columns: { done: { offset: 0, limit: 1.5 } } } },
      'bad_frame',
    ],
    [
      'an unknown column',
      { type: 'subscribe', v: 1, window: { columns: { archived: { offset: 0, limit: 5 } } } },
      'bad_frame',
    ],
    [
      'an unknown status',
      { type: 'subscribe', v: 1, window: { filter: { status: 'lost' } } },
      'bad_frame',
    ],
    [
      'a search of 201 characters',
      { type: 'subscribe', v: 1, window: { filter: { text: 'x'.repeat(201) } } },
      'bad_frame',
    ],
    [
      'an unknown filter key',
      { type: 'subscribe', v: 1, window: { filter: { sql: '1=1' } } },
      'bad_frame',
    ],
    [
      '21 watched tasks',
      { type: 'subscribe', v: 1, window: { watch: Array.from({ length: 21 }, (_, i) => `t${i}`) } },
      'bad_frame',
    ],
    [
      'a watched id that is no string',
      { type: 'subscribe', v: 1, window: { watch: [7] } },
      'bad_frame',
    ],
    ['a window that is no object', { type: 'subscribe', v: 1, window: 'all' }, 'bad_frame'],
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
    expect((await bystander.sync()).map((f) => f.type)).toEqual(['update']);
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

describe('model: any sequence of changes keeps every window equal to the cut of the full list', () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('create'), user: fc.constantFrom('alice', 'bob', 'carol') }),
    fc.record({ kind: fc.constant('finish'), pick: fc.nat(), code: fc.constantFrom(0, 1) }),
    fc.record({ kind: fc.constant('cancel'), pick: fc.nat() }),
    fc.record({ kind: fc.constant('retry'), pick: fc.nat() }),
    fc.record({ kind: fc.constant('output'), pick: fc.nat() }),
    fc.record({ kind: fc.constant('drop') }),
    fc.record({ kind: fc.constant('forget'), pick: fc.nat() }),
  );
  const range = fc.record({ offset: fc.nat({ max: 6 }), limit: fc.nat({ max: 4 }) });
  const window = fc.record(
    {
      filter: fc.record(
        {
          user: fc.constantFrom('', 'alice', 'bob'),
          status: fc.constantFrom('', 'queued', 'failed' as const),
          text: fc.constantFrom('', 'x1', 'X'),
        },
        { requiredKeys: [] },
      ),
      columns: fc.record(
        { queued: range, running: range, done: range, failed: range },
        { requiredKeys: [] },
      ),
      watch: fc.array(fc.constantFrom('t1', 't2', 't5', 't9'), { maxLength: 2 }),
    },
    { requiredKeys: [] },
  );
  // lineKeys: positions derived from the source's line (the runtime), or
  // every moved card emitted by the source (a source without a line).
  test.prop(
    [
      fc.array(op, { maxLength: 30 }),
      fc.array(window, { minLength: 3, maxLength: 3 }),
      fc.boolean(),
    ],
    { numRuns: 20 },
  )(
    'windows equal the model after the ops, with a reconnect in between',
    async (ops, windows, lineKeys) => {
      h = await startHarness({ subscribeBurst: 100 }, new FakeBoard({ maxRunning: 2, lineKeys }));
      const views = [
        { token: ALICE, userId: 'alice' as string | null },
        { token: BOB, userId: 'bob' },
        { token: ADMIN, userId: null },
      ];
      const live = [];
      for (const [i, v] of views.entries()) {
        const c = await open(v.token);
        const w = windows[i]!;
        c.send({ type: 'subscribe', v: 1, window: w });
        live.push({
          ...v,
          c,
          w,
          state: { seq: -1, cards: new Map<string, BoardCard>() } as WindowState,
        });
      }
      for (const o of ops) {
        const all = h.board.cards(null);
        const running = all.filter((c) => c.running);
        const open_ = all.filter((c) => c.column === 'queued' || c.column === 'running');
        const ended = all.filter((c) => c.column === 'failed');
        if (o.kind === 'create') await h.board.createTask(o.user, spec(`x${all.length}`));
        else if (o.kind === 'finish' && running.length > 0)
          h.board.finish(running[o.pick % running.length]!.taskId, o.code);
        else if (o.kind === 'cancel' && open_.length > 0)
          await h.board.cancel(null, open_[o.pick % open_.length]!.taskId);
        else if (o.kind === 'retry' && ended.length > 0)
          await h.board.retry(null, ended[o.pick % ended.length]!.taskId);
        else if (o.kind === 'output' && running.length > 0)
          h.board.output(running[o.pick % running.length]!.taskId, 'out');
        else if (o.kind === 'forget') {
          // Retention: a finished card, and sometimes every one, leaves the board.
          const finished = all.filter((c) => c.column === 'done' || c.column === 'failed');
          if (finished.length > 0)
            h.board.forget(
              o.pick % 3 === 0
                ? finished.map((c) => c.taskId)
                : [finished[o.pick % finished.length]!.taskId],
            );
        } else if (o.kind === 'drop') {
          const v = live[0]!;
          v.c.ws.terminate();
          v.c = await open(v.token);
          v.state = { seq: -1, cards: new Map() } as WindowState;
          v.c.send({ type: 'subscribe', v: 1, window: v.w });
        }
      }
      for (const v of live) {
        const frames = await v.c.sync();
        applyFrames(v.state, frames);
        const want = expectedWindow(h.board.cards(v.userId), v.w);
        expect(byTask([...v.state.cards.values()])).toEqual(want.cards);
        expect(v.state.counts).toEqual(want.counts);
        for (const card of v.state.cards.values())
          if (v.userId !== null) expect(card.userId).toBe(v.userId);
      }
      for (const c of clients.splice(0)) c.ws.terminate();
      await h.server.close();
    },
  );
});
