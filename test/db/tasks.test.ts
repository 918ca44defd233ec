import { expect, it } from 'vitest';
import { NotFoundError, ValidationError } from '../../src/db/errors.js';
import { newId } from '../../src/db/ids.js';
import { listSessionEvents } from '../../src/db/sessionQueries.js';
import {
  createTasksWithSessions,
  createTaskWithSession,
  DEFAULT_COLUMN,
  getTask,
  getTaskForUser,
  listTasksForUser,
  updateTaskColumn,
} from '../../src/db/tasks.js';
import { describeEachEngine } from '../support/databases.js';
import { enqueue, rowCounts, SPEC, steppingClock } from './fixtures.js';

describeEachEngine('tasks', (getDb) => {
  it('creates a task, its first queued session and the creation event together', async () => {
    const { db } = getDb();
    const now = new Date('2026-07-14T10:00:00Z');
    const { task, session } = await createTaskWithSession(db, {
      userId: 'alice',
      title: 'fix the flaky test',
      spec: { ...SPEC, env: { CI: '1' } },
      kind: 'bootstrap',
      now,
    });
    expect(task).toMatchObject({ userId: 'alice', column: DEFAULT_COLUMN, createdAt: now });
    expect(task.spec).toEqual({ ...SPEC, env: { CI: '1' } });
    expect(session).toMatchObject({
      taskId: task.id,
      userId: 'alice',
      kind: 'bootstrap',
      status: 'queued',
      attempt: 1,
      enqueuedAt: now,
    });
    expect(await getTask(db, task.id)).toEqual(task);
    const events = await listSessionEvents(db, session.id);
    expect(events).toMatchObject([{ from: null, to: 'queued', reason: 'created', at: now }]);
  });

  it('filters reads and moves by user in SQL: another user sees not found', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const a1 = (await enqueue(db, 'alice', now(), 'one')).task;
    const a2 = (await enqueue(db, 'alice', now(), 'two')).task;
    const b1 = (await enqueue(db, 'bob', now(), 'three')).task;
    expect((await listTasksForUser(db, 'alice')).map((t) => t.id)).toEqual([a1.id, a2.id]);
    expect((await listTasksForUser(db, 'bob')).map((t) => t.id)).toEqual([b1.id]);
    expect((await listTasksForUser(db, 'alice', { limit: 1 })).map((t) => t.id)).toEqual([a1.id]);
    await expect(getTaskForUser(db, 'bob', a1.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await getTaskForUser(db, 'alice', a1.id)).title).toBe('one');

    await expect(
      updateTaskColumn(db, { userId: 'bob', taskId: a1.id, column: 'done', now: now() }),
    ).rejects.toMatchObject({ code: 'DB_NOT_FOUND' });
    const moved = await updateTaskColumn(db, {
      userId: 'alice',
      taskId: a1.id,
      column: 'done',
      now: now(),
    });
    expect(moved.column).toBe('done');
    await expect(getTask(db, newId('task'))).rejects.toBeInstanceOf(NotFoundError);
  });

  it('rejects each bad input with a typed error naming the field, leaving no row', async () => {
    const { db } = getDb();
    const now = new Date('2026-07-14T10:00:00Z');
    const good = { userId: 'alice', title: 't', spec: SPEC, now };
    const cases: [Record<string, unknown>, string][] = [
      [{ userId: '' }, 'userId'],
      [{ userId: "alice'; DROP TABLE tasks; --" }, 'userId'],
      [{ title: '' }, 'title'],
      [{ title: '   ' }, 'title'],
      [{ title: 'x'.repeat(201) }, 'title'],
      [{ title: 'bell\u0007' }, 'title'],
      [{ spec: { image: 'busybox', command: 'rm -rf /' } }, 'spec.command'],
      [{ spec: { image: 'busybox', command: ['x'], env: { 'BAD-KEY': 'v' } } }, 'spec.env.BAD-KEY'],
      [{ column: 'Done!' }, 'column'],
      [{ kind: 'daemon' }, 'kind'],
      [{ now: new Date('nope') }, 'now'],
      [{ extra: true }, 'extra'],
    ];
    for (const [patch, field] of cases) {
      const err = await createTaskWithSession(db, { ...good, ...patch } as typeof good).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, JSON.stringify(patch)).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).field).toBe(field);
    }
    expect(await rowCounts(db)).toEqual({ tasks: 0, sessions: 0, session_events: 0, user_caps: 0 });
  });

  it('creates a batch in one transaction, or nothing when one input is bad', async () => {
    const { db } = getDb();
    const now = steppingClock();
    const inputs = ['a', 'b', 'c'].map((title) => ({
      userId: 'alice',
      title,
      spec: SPEC,
      now: now(),
    }));
    const created = await createTasksWithSessions(db, inputs);
    expect(created.map((c) => [c.task.title, c.session.status, c.session.taskId])).toEqual(
      created.map((c, n) => [inputs[n]!.title, 'queued', c.task.id]),
    );
    expect(await rowCounts(db)).toMatchObject({ tasks: 3, sessions: 3, session_events: 3 });
    const bad = [...inputs, { ...inputs[0]!, title: '' }];
    await expect(createTasksWithSessions(db, bad)).rejects.toMatchObject({
      code: 'DB_VALIDATION',
      field: 'inputs.3.title',
    });
    expect(await rowCounts(db)).toMatchObject({ tasks: 3, sessions: 3, session_events: 3 });
    expect(await createTasksWithSessions(db, [])).toEqual([]);
  });
});
