/**
 * The hand check of the runners' ops (src/db/tickFastCheck.ts) never
 * accepts what the zod schema rejects, outputs what the schema outputs,
 * and accepts the ops the runners really send.
 */
import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { newId } from '../../src/db/ids.js';
import { fastCheckedHead, fastCheckedOp } from '../../src/db/tickFastCheck.js';
import { tickHeadSchema } from '../../src/db/tickInput.js';
import { tickOpSchema } from '../../src/db/validateTickOp.js';

const sid = 'ses_0123456789abcdef0123456789abcdef';

const handle = () => ({
  op: 'handle' as const,
  ref: '7',
  sessionId: newId('session'),
  epoch: 3,
  backend: 'simulated' as const,
  handle: 'rt-ses_x:12.34.boot@abc',
  startedAt: new Date(1_700_000_000_000),
});

const finish = () => ({
  op: 'finish' as const,
  ref: '8',
  sessionId: newId('session'),
  epoch: 1,
  status: 'failed' as const,
  exitCode: 2,
  reason: 'exit_code',
  userRecoverable: false,
  output: { text: 'a\nb', totalBytes: 3, truncated: false },
  column: 'failed',
  requeue: { sessionId: newId('session') },
});

const enqueue = () => ({
  op: 'enqueue' as const,
  ref: '9',
  taskId: newId('task'),
  sessionId: newId('session'),
  userId: 'alice@example.com',
  title: 'build it',
  spec: { image: 'node:20', command: ['npm', 'test'], env: { CI: '1' } },
  column: 'queued',
});

const head = () => ({
  owner: 'node-1@boot',
  now: new Date(1_700_000_000_000),
  globalCap: 20,
  defaultUserCap: 1,
  want: 5,
  ops: [handle(), finish()],
  since: 41,
  tailChars: 2_000,
  changesMax: 100,
});

/** Values that break one rule or another (or none), per field. */
const anyValue = fc.oneof(
  fc.constantFrom(
    null,
    undefined,
    -1,
    0,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    2_147_483_648,
    -2_147_483_649,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    ' ',
    'x'.repeat(129),
    'x'.repeat(256),
    'r'.repeat(1001),
    'Done',
    '\ud800 lone',
    'ok 🙂',
    'a'.repeat(41),
    '-rt',
    'rt x',
    'succeeded',
    'failed',
    'queued',
    'docker',
    'podman',
    sid,
    `${sid}0`,
    'tsk_0123456789abcdef0123456789abcdef',
    'a\u0007b',
    'é'.repeat(30_000),
    'x\0y',
    'bad name',
    'BAD-KEY',
    100_001,
    1_000_001,
    true,
    false,
    new Date(Number.NaN),
    new Date(0),
    [],
    {},
  ),
  fc.string(),
  fc.integer(),
  fc.record({ text: fc.string(), totalBytes: fc.integer(), truncated: fc.boolean() }),
  fc.record({ sessionId: fc.constantFrom(sid, 'ses_1') }),
  fc.record(
    {
      image: fc.constantFrom('node:20', '', 'a b', 'x'.repeat(256)),
      command: fc.oneof(
        fc.array(
          fc.constantFrom('npm', '', 'a\0', 'é'.repeat(8192), 'x'.repeat(8193), 'a\ud800', '🙂'),
          {
            maxLength: 12,
          },
        ),
        fc.constant(Array.from({ length: 257 }, () => 'a')),
      ),
      env: fc.dictionary(
        fc.constantFrom('CI', 'A_1', '1A', 'a-b', '', '__proto__'),
        fc.constantFrom('1', 'x\0', '\udc00', '🙂'),
      ),
      extra: fc.constant(1),
    },
    { requiredKeys: ['image', 'command'] },
  ),
);

/** `base` with some fields replaced, removed or added. */
const mutated = (base: Record<string, unknown>) =>
  fc
    .tuple(
      fc.dictionary(fc.constantFrom(...Object.keys(base), 'extra'), anyValue, { maxKeys: 3 }),
      fc.subarray(Object.keys(base), { maxLength: 1 }),
    )
    .map(([changes, removed]) => {
      const o: Record<string, unknown> = { ...base, ...changes };
      for (const k of removed) delete o[k];
      return o;
    });

describe('fastCheckedOp', () => {
  it('accepts the ops runners send, as the schema outputs them, as copies', () => {
    for (const op of [
      handle(),
      { ...handle(), startedAt: null },
      finish(),
      { ...finish(), status: 'succeeded' as const, reason: null, output: null, requeue: null },
    ]) {
      const fast = fastCheckedOp(op);
      expect(fast).toEqual(tickOpSchema.parse(op));
      expect(fast).not.toBe(op);
    }
    const f = finish();
    const fast = fastCheckedOp(f);
    expect(fast?.op === 'finish' && fast.output).not.toBe(f.output);
  });

  it('leaves an env named __proto__ to the schema, which refuses it (it was dropped in silence)', () => {
    const op = {
      ...enqueue(),
      spec: { image: 'node:20', command: ['true'], env: JSON.parse('{"__proto__":"x","CI":"1"}') },
    };
    expect(fastCheckedOp(op)).toBeUndefined();
    expect(tickOpSchema.safeParse(op).success).toBe(false);
  });

  it('leaves every other kind of op to the schema', () => {
    expect(fastCheckedOp({ op: 'cap', ref: '1', userId: 'u', maxRunning: 1 })).toBeUndefined();
    expect(fastCheckedOp(null)).toBeUndefined();
    // Not a plain object (its keys may come from elsewhere): the schema decides.
    expect(fastCheckedOp(Object.assign(Object.create({ extra: 1 }), handle()))).toBeUndefined();
  });

  it('accepts the enqueue ops commands send, and the heads ticks send', () => {
    for (const op of [enqueue(), { ...enqueue(), column: undefined }]) {
      const fast = fastCheckedOp(op);
      expect(fast).toEqual(tickOpSchema.parse(op));
      expect(fast?.op === 'enqueue' && Object.isFrozen(fast.spec.command)).toBe(true);
    }
    const { column: _, ...noColumn } = enqueue();
    expect(fastCheckedOp(noColumn)).toEqual(tickOpSchema.parse(noColumn));
    const { since: _s, tailChars: _t, changesMax: _c, ...bare } = head();
    for (const h of [head(), { ...head(), resync: true }, bare, { ...bare, since: undefined }]) {
      const fast = fastCheckedHead(h, 10_000);
      expect(fast).toEqual(tickHeadSchema.parse(h));
      expect(fast?.ops).not.toBe(h.ops);
    }
    expect(fastCheckedHead(head(), 1)).toBeUndefined();
  });

  test.prop([mutated(head())], { numRuns: 1000 })(
    'accepts only the heads the schema accepts, and outputs what it outputs',
    (h) => {
      const fast = fastCheckedHead(h, 10_000);
      if (fast === undefined) return;
      const zod = tickHeadSchema.safeParse(h);
      expect(zod.success).toBe(true);
      expect(fast).toEqual(zod.data);
    },
  );

  test.prop([fc.oneof(mutated(handle()), mutated(finish()), mutated(enqueue()))], {
    numRuns: 3000,
  })('accepts only what the schema accepts, and outputs what it outputs', (op) => {
    const fast = fastCheckedOp(op);
    if (fast === undefined) return;
    const zod = tickOpSchema.safeParse(op);
    expect(zod.success).toBe(true);
    expect(fast).toEqual(zod.data);
  });
});
