/**
 * What a tick's NOTIFY says (docs/data.md, "Dispatch"): `<tick> <owner>
 * grantable` when a grant is still possible after it (room under the
 * global cap and a line with work and room), `<tick> <owner> full` when
 * not. Other nodes tick for a `grantable` one only (src/actors/runtimeFeed.ts),
 * so a cluster at its cap does not have every node tick after every tick.
 * Only sent when another boot has a heartbeat row: a node alone tells nobody.
 * A full one only when another boot's row says its board is watched
 * (migration 12, `setWatching`): the others' listeners sleep through it.
 */
import { expect, it } from 'vitest';
import { beat, type Db, setWatching } from '../../src/db/index.js';

import { TICK_CHANNEL } from '../../src/db/sql/tickChannel.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueueOp, finishOp, ticker } from './tickFixtures.js';

type Listen = (
  channel: string,
  onPayload: (payload: string) => void,
) => Promise<() => Promise<void>>;

async function until(what: string, check: () => boolean, deadlineMs = 5_000) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Another boot's heartbeat row: someone to tell. */
async function peer(db: Db, owner: string): Promise<void> {
  const now = new Date();
  await db
    .insertInto('node_heartbeats')
    .values({ owner, node_id: owner.split('@')[0] ?? owner, started_at: now, beat_at: now })
    .execute();
}

/** Every payload on the tick channel, heard on a connection of its own. */
async function listening(listener: { listen: Listen }) {
  const heard: string[] = [];
  const unlisten = await listener.listen(TICK_CHANNEL, (p) => heard.push(p));
  return { heard, unlisten };
}

describeEachEngine('tick NOTIFY', (getDb) => {
  it('is sent only when another boot has a heartbeat row', async () => {
    const { db, connectAnother } = getDb();
    const { heard, unlisten } = await listening(await connectAnother());
    try {
      const t = ticker(db, { owner: 'node-a@boot1' });
      await t([enqueueOp('ann')]);
      // Its own row is nobody else.
      await peer(db, 'node-a@boot1');
      await t([enqueueOp('ann')]);
      await peer(db, 'node-b@boot1');
      const third = await t([enqueueOp('ann')]);
      await until('the NOTIFY of the third tick', () => heard.length > 0);
      // Notifications arrive in commit order: the first two were never sent.
      expect(heard).toEqual([`${third.tick} node-a@boot1 grantable`]);
    } finally {
      await unlisten();
    }
  });

  it('says grantable while a grant is possible, full at the cap or with nothing eligible', async () => {
    const { db, connectAnother } = getDb();
    const { heard, unlisten } = await listening(await connectAnother());
    try {
      await peer(db, 'node-b@boot1');
      const t = ticker(db, { globalCap: 2, defaultUserCap: 1, owner: 'node-a@boot1' });
      const says = async (expected: string) => {
        const n = heard.length;
        const r = await step();
        await until(`NOTIFY of tick ${r.tick}`, () => heard.length > n);
        expect(heard.at(-1)).toBe(`${r.tick} node-a@boot1 ${expected}`);
        return r;
      };
      let step = () => t([enqueueOp('ann'), enqueueOp('bob'), enqueueOp('ann')], { want: 1 });
      // One granted of two: room left and bob waits.
      const first = await says('grantable');
      step = () => t([], { want: 1 });
      const second = await says('full');
      const [ann] = first.granted;
      const [bob] = second.granted;
      if (ann === undefined || bob === undefined) throw new Error('expected two grants');
      // At the cap, new work changes nothing for the others.
      step = () => t([enqueueOp('cat')]);
      await says('full');
      // A finish frees room, and ann's second and cat's wait: grantable.
      step = () => t([finishOp(ann.session.id, ann.session.epoch)]);
      await says('grantable');
      // Asked for two, room for one: that fills the cap.
      step = () => t([], { want: 2 });
      const third = await says('full');
      expect(third.granted).toHaveLength(1);
      // bob ends: room again, and one of ann and cat still waits.
      step = () => t([finishOp(bob.session.id, bob.session.epoch)]);
      await says('grantable');
    } finally {
      await unlisten();
    }
  });

  it('sends a full tick only if another boot is watched, a grantable one always', async () => {
    const { db, connectAnother } = getDb();
    const { heard, unlisten } = await listening(await connectAnother());
    try {
      await peer(db, 'node-b@boot1');
      await peer(db, 'node-c@boot1');
      // The ticking boot's own flag does not count: only the others' do.
      await peer(db, 'node-a@boot1');
      expect(await setWatching(db, { owner: 'node-b@boot1', watching: false })).toBe(true);
      expect(await setWatching(db, { owner: 'node-c@boot1', watching: false })).toBe(true);
      const t = ticker(db, { globalCap: 1, defaultUserCap: 1, owner: 'node-a@boot1' });
      // Granted one of two: the cap is full, nobody watches: nothing said.
      const quiet = await t([enqueueOp('ann'), enqueueOp('bob')], { want: 1 });
      expect(quiet.granted).toHaveLength(1);
      // A beat keeps the flag (it writes beat_at and the lock only).
      await beat(db, { owner: 'node-b@boot1', nodeId: 'node-b', now: new Date() });
      const [ann] = quiet.granted;
      if (ann === undefined) throw new Error('expected a grant');
      // A finish with bob waiting leaves room when it asks for none: grantable, said.
      const freed = await t([finishOp(ann.session.id, ann.session.epoch)], { want: 0 });
      await until(`NOTIFY of tick ${freed.tick}`, () => heard.length > 0);
      expect(heard).toEqual([`${freed.tick} node-a@boot1 grantable`]);
      // Someone watches node c: full ticks are said again.
      expect(await setWatching(db, { owner: 'node-c@boot1', watching: true })).toBe(true);
      const full = await t([], { want: 1 });
      await until(`NOTIFY of tick ${full.tick}`, () => heard.length > 1);
      expect(heard[1]).toBe(`${full.tick} node-a@boot1 full`);
      // A boot with no row has nothing to set.
      expect(await setWatching(db, { owner: 'node-z@boot1', watching: true })).toBe(false);
    } finally {
      await unlisten();
    }
  });
});
