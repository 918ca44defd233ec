import { describe, expect, test } from 'vitest';
import { BoardEntries } from '../../src/actors/runtimeBoardEntries.js';
import { CardPublisher } from '../../src/actors/runtimeBoardPublish.js';
import { RuntimeListenerError } from '../../src/actors/runtimeListenerError.js';
import type { RuntimeCard } from '../../src/actors/runtimeTypes.js';
import { runningRows } from '../support/boardRuns.js';
import { pgliteRuntimes } from '../support/pgliteRuntimes.js';

/** Entries holding the running cards `task_<n>` of `ns`, and a publisher over them. */
function board(...ns: number[]) {
  const entries = new BoardEntries(() => {});
  for (const n of ns) {
    const { task, session } = runningRows(n);
    entries.put(task, session);
  }
  const told: RuntimeCard[] = [];
  const thrown: unknown[] = [];
  const publisher = new CardPublisher(entries, (e) => thrown.push(e));
  return { entries, publisher, told, thrown, listen: () => publisher.add((c) => told.push(c)) };
}

test('a card is told once per change of what it shows, and again when only its line key moved', () => {
  const { entries, publisher, told, listen } = board(1);
  listen();
  publisher.publish(['task_1']);
  publisher.publish(['task_1']);
  expect(told.map((c) => c.taskId)).toEqual(['task_1']);

  const { task, session } = runningRows(1);
  entries.put(task, { ...session, status: 'succeeded', exitCode: 0, updatedAt: new Date(9e12) });
  publisher.publish(['task_1']);
  expect(told.map((c) => c.status)).toEqual(['running', 'succeeded']);

  publisher.publish(['task_1'], true);
  expect(told).toHaveLength(3);
});

test('several cards are told once each, in board order, and unknown ids are skipped', () => {
  const { publisher, told, listen } = board(3, 1, 2);
  listen();
  publisher.publish(['task_3', 'task_1', 'task_9', 'task_3', 'task_2']);
  expect(told.map((c) => c.taskId)).toEqual(['task_1', 'task_2', 'task_3']);
});

test('with nobody listening nothing is told, and what was told before is forgotten', () => {
  const { publisher, told, listen } = board(1, 2);
  const stop = listen();
  publisher.publish(['task_1', 'task_2']);
  stop();
  expect(publisher.size).toBe(0);
  // Published to nobody: a listener that comes back is told these cards' next change.
  publisher.publish(['task_1']);
  listen();
  publisher.publish(['task_1', 'task_2']);
  expect(told.map((c) => c.taskId)).toEqual(['task_1', 'task_2', 'task_1']);
  publisher.forget('task_2');
  publisher.publish(['task_2']);
  expect(told.map((c) => c.taskId)).toEqual(['task_1', 'task_2', 'task_1', 'task_2']);
});

test('a listener that throws is reported, and the listeners after it still hear', () => {
  const { publisher, told, thrown, listen } = board(1, 2);
  const bug = new Error('listener bug');
  publisher.add(() => {
    throw bug;
  });
  listen();
  publisher.publish(['task_1', 'task_2']);
  expect(told.map((c) => c.taskId)).toEqual(['task_1', 'task_2']);
  expect(thrown.map((e) => (e as RuntimeListenerError).cause)).toEqual([bug, bug]);
  expect(thrown[0]).toBeInstanceOf(RuntimeListenerError);
});

describe('through a runtime', () => {
  const runtimes = pgliteRuntimes();

  test("a subscriber that throws on every card neither stops a job nor the other subscribers: its throws go to the runtime's onError", async () => {
    const h = await runtimes.open();
    await h.runtime.booted;
    h.runtime.subscribe(() => {
      throw new Error('subscriber bug');
    });
    const statuses: string[] = [];
    h.runtime.subscribe((card) => statuses.push(card.status));
    const { task } = await h.runtime.submit('alice', {
      title: 't',
      image: 'runner:v1',
      command: ['agent', '2'],
    });
    await h.advance(5_000);
    const [card] = h.runtime.cards('alice');
    expect(card).toMatchObject({ taskId: task.id, status: 'succeeded' });
    expect(statuses).toContain('running');
    expect(statuses.at(-1)).toBe('succeeded');
    expect(h.errors.length).toBeGreaterThan(0);
    for (const e of h.errors)
      expect(e).toMatchObject({
        listener: 'board',
        message: 'a board subscriber threw: subscriber bug',
      });
  });
});
