import fc from 'fast-check';
import { expect, test } from 'vitest';
import { type ApplyOptions, createBoardIndex } from '../../src/actors/runtimeBoard.js';
import * as backlog from '../../src/actors/runtimeBoardBacklog.js';
import type { BoardPositions } from '../../src/actors/runtimeBoardPositions.js';
import type { Db, Session, SessionStatus, Task } from '../../src/db/index.js';
import { queuedSession } from '../support/boardRuns.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/runtimeBoardBacklog.ts', import.meta.url), backlog);

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms);

/** A session row of `task` (attempt `attempt`), as the store would send it. */
const row = (task: string, attempt: number, over: Partial<Session> = {}): Session =>
  queuedSession({ id: `${task}_a${attempt}`, taskId: task, turn: 0, joinSeq: 0, attempt, ...over });
const held = (session: Session): backlog.HeldRow => ({
  session,
  task: undefined,
  outputShown: false,
  storedOutput: undefined,
});

test('past its bound the task held longest comes back; a later row of a held task keeps its place', () => {
  const b = new backlog.BoardBacklog(2);
  expect(b.hold(held(row('t1', 1)))).toEqual([]);
  expect(b.hold(held(row('t2', 1)))).toEqual([]);
  const t1Running = row('t1', 1, { status: 'running', epoch: 1, updatedAt: at(1) });
  expect(b.hold(held(t1Running))).toEqual([]);
  // t1 was held first: it comes back, with its later row.
  expect(b.hold(held(row('t3', 1)))).toEqual([held(t1Running)]);
  expect(b.size).toBe(2);
  expect(b.drain().map((r) => r.session.taskId)).toEqual(['t2', 't3']);
  expect(b.size).toBe(0);
});

test('a cancel and another attempt of a held task come back with every held row', () => {
  const b = new backlog.BoardBacklog();
  b.hold(held(row('t1', 1)));
  b.hold(held(row('t2', 1)));
  const cancel = held(row('t2', 1, { status: 'cancelled', updatedAt: at(1) }));
  expect(b.hold(cancel).map((r) => r.session.status)).toEqual(['queued', 'queued', 'cancelled']);
  expect(b.size).toBe(0);
  b.hold(held(row('t1', 1, { status: 'failed', epoch: 1 })));
  const again = held(row('t1', 2));
  expect(b.hold(again).map((r) => r.session.id)).toEqual(['t1_a1', 't1_a2']);
});

test('a row the card shows already, or an older one, is not held; an output chunk takes its task back', () => {
  const b = new backlog.BoardBacklog();
  const shown = row('t1', 1, { status: 'running', epoch: 1, updatedAt: at(5) });
  expect(b.hold(held(shown), shown)).toEqual([held(shown)]);
  expect(b.hold(held(row('t1', 1)), shown)).toEqual([held(row('t1', 1))]);
  const done = row('t1', 1, { status: 'succeeded', epoch: 1, updatedAt: at(6) });
  expect(b.hold(held(done), shown)).toEqual([]);
  expect(b.takeSession('t1_a2')).toBeUndefined();
  expect(b.takeSession('t1_a1')).toEqual(held(done));
  expect(b.size).toBe(0);
});

// --- A board that holds rows while nobody listens shows, at every read,
// --- exactly what a board that applied every row at once shows.

const TASKS = ['t0', 't1', 't2', 't3'];
const USERS = ['u1', 'u2'];

type Op =
  | { k: 'step'; task: number; choice: number; opt: number }
  | { k: 'late'; task: number; back: number; shown: boolean }
  | { k: 'out'; task: number }
  | { k: 'read' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({
      k: fc.constant('step' as const),
      task: fc.nat(3),
      choice: fc.nat(3),
      opt: fc.nat(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant('late' as const),
      task: fc.nat(3),
      back: fc.nat(5),
      shown: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant('out' as const), task: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.constant({ k: 'read' as const }) },
);

interface Sent {
  session: Session;
  task: Task | undefined;
  options: ApplyOptions;
}

/** Places as a line book gives them: from the row's own key. */
const positions: BoardPositions = {
  placeOf: (s) =>
    s.status === 'running' ? 0 : s.status === 'queued' && s.turn !== null ? s.turn + 1 : null,
  atCapOf: () => null,
  subscribe: () => () => {},
};

/**
 * A store whose only table is the stored outputs (the one read a card does:
 * a finished run's tail, when no row brought it and this boot did not show it).
 */
const outputs = {
  selectFrom: () => ({
    select: () => ({
      where: (_column: string, _op: string, ids: readonly string[]) => ({
        execute: async () =>
          ids.map((id) => ({ session_id: id, tail: `stored ${id}\n`, whole: true })),
      }),
    }),
  }),
} as unknown as Db;

const final = (s: SessionStatus) => s !== 'queued' && s !== 'running';

test('held rows: every read shows what applying each row at once shows (property)', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(opArb, { minLength: 10, maxLength: 60, size: 'max' }),
      async (ops) => {
        const errors: unknown[] = [];
        const eager = createBoardIndex(outputs, positions, undefined, (e) => errors.push(e));
        eager.subscribe(() => {});
        const lazy = createBoardIndex(outputs, positions, undefined, (e) => errors.push(e));
        const pending: Promise<void>[] = [];
        const history = new Map<string, Sent[]>();
        let clock = 1;
        let turn = 0;
        const send = (s: Sent) => {
          history.set(s.session.taskId, [...(history.get(s.session.taskId) ?? []), s]);
          pending.push(eager.apply(s.session, s.task, s.options));
          pending.push(lazy.apply(s.session, s.task, s.options));
        };
        const taskRow = (id: string, column: Task['column']): Task => ({
          id,
          userId: USERS[TASKS.indexOf(id) % 2] as string,
          title: id,
          spec: { image: 'i', command: ['c'] },
          column,
          createdAt: at(TASKS.indexOf(id)),
          updatedAt: at(clock),
          timeLimitMs: null,
        });
        const endOptions = (opt: number): ApplyOptions =>
          opt === 0
            ? { outputShown: true }
            : opt === 3
              ? {}
              : { storedOutput: opt === 1 ? null : { tail: `tail ${clock}\n`, whole: true } };
        for (const op of ops) {
          clock += 1;
          if (op.k === 'read') {
            expect(lazy.cards(null)).toEqual(eager.cards(null));
            continue;
          }
          const id = TASKS[op.task] as string;
          const sent = history.get(id) ?? [];
          const last = sent.at(-1)?.session;
          if (op.k === 'late') {
            const old = sent.at(-1 - (op.back % Math.max(1, sent.length)));
            if (old !== undefined)
              send(op.shown ? { ...old, options: { ...old.options, outputShown: true } } : old);
            continue;
          }
          if (op.k === 'out') {
            if (last !== undefined) {
              eager.appendOutput(last.id, `line ${clock}\n`);
              lazy.appendOutput(last.id, `line ${clock}\n`);
            }
            continue;
          }
          const user = USERS[op.task % 2] as string;
          const next = (s: Session, over: Partial<Session>): Session => ({
            ...s,
            updatedAt: at(clock),
            ...over,
          });
          if (last === undefined) {
            send({
              session: row(id, 1, { userId: user, turn: turn++, updatedAt: at(clock) }),
              task: taskRow(id, 'queued'),
              options: {},
            });
          } else if (last.status === 'queued') {
            const status =
              (['running', 'cancelled', 'queued', 'running'] as const)[op.choice] ?? 'queued';
            send({
              session: next(last, {
                status,
                epoch: status === 'running' ? last.epoch + 1 : last.epoch,
                owner: status === 'running' ? 'n' : null,
              }),
              task:
                op.opt === 0 ? taskRow(id, status === 'cancelled' ? 'failed' : status) : undefined,
              options: status === 'cancelled' ? endOptions(op.opt) : {},
            });
          } else if (last.status === 'running') {
            const status =
              (['succeeded', 'failed', 'cancelled', 'running'] as const)[op.choice] ?? 'running';
            send({
              session: next(last, { status, handle: `h${clock}` }),
              task:
                op.opt === 1 ? taskRow(id, status === 'succeeded' ? 'done' : 'failed') : undefined,
              options: final(status) ? endOptions(op.opt) : { outputShown: op.opt === 2 },
            });
          } else if (op.choice < 2) {
            send({
              session: row(id, last.attempt + 1, {
                userId: user,
                turn: turn++,
                updatedAt: at(clock),
                failureReason: op.choice === 0 ? null : 'owner_lost',
              }),
              task: op.opt === 0 ? undefined : taskRow(id, 'queued'),
              options: {},
            });
          } else if (op.choice === 2) {
            send({ session: next(last, {}), task: undefined, options: endOptions(op.opt) });
          }
        }
        await Promise.all(pending);
        // The lazy board's catch-up, and the stored outputs it reads then, as any reader's.
        lazy.cards(null);
        await new Promise((r) => setTimeout(r, 0));
        expect(lazy.cards(null)).toEqual(eager.cards(null));
        await new Promise((r) => setTimeout(r, 0));
        expect(errors).toEqual([]);
        for (const c of eager.cards(null)) expect(lazy.line.keyOf(c)).toEqual(eager.line.keyOf(c));
        eager.close();
        lazy.close();
      },
    ),
    { numRuns: 300 },
  );
});
