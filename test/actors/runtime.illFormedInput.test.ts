/**
 * Input the store cannot hold, submitted through a whole runtime: a lone
 * UTF-16 surrogate (Postgres' json refuses it, SQLSTATE 22P02) or an empty
 * program name is refused at once as `invalid` naming its field, never sent
 * to the store and reported as an outage; and every string the schema takes
 * comes back from the rows as it went in.
 */
import { fc } from '@fast-check/vitest';
import { expect, test } from 'vitest';
import { RuntimeCommandError, type RuntimeTaskInput } from '../../src/actors/runtimeTypes.js';
import { createTestRuntime, type TestRuntime } from '../../src/testing/index.js';
import { describeEachEngine } from '../support/databases.js';

const ok = { title: 'work', image: 'local', command: ['echo', 'x'] };

async function refusal(h: TestRuntime, input: RuntimeTaskInput) {
  try {
    await h.runtime.submit('ann', input);
  } catch (error) {
    expect(error).toBeInstanceOf(RuntimeCommandError);
    return { code: (error as RuntimeCommandError).code, message: (error as Error).message };
  }
  throw new Error('expected a refusal');
}

describeEachEngine('runtime: input the store cannot hold', (getDb) => {
  let h: TestRuntime | undefined;
  const boot = async () => {
    h = await createTestRuntime({ db: getDb().db, nodeId: 'nodeA' });
    return h;
  };

  test('a lone surrogate is invalid, naming its field, and nothing is queued', async () => {
    const rt = await boot();
    try {
      const cases: Array<[RuntimeTaskInput, RegExp]> = [
        // Named as the caller sent them (submission.ts), not as the tick carries them.
        [{ ...ok, title: '\ud800 lone' }, /^invalid title: /],
        [{ ...ok, command: ['echo', '\udc00'] }, /^invalid command\.1: /],
        [{ ...ok, env: { A: '\ud83d' } }, /^invalid env\.A: /],
      ];
      for (const [input, field] of cases) {
        const r = await refusal(rt, input);
        expect(r.code, r.message).toBe('invalid');
        expect(r.message).toMatch(field);
      }
      expect(rt.errors).toEqual([]);
      const accepted = await rt.runtime.submit('ann', ok);
      expect(accepted.task.title).toBe('work');
    } finally {
      await rt.close();
    }
  });

  test('an empty program name is invalid at submit, not a failed start', async () => {
    const rt = await boot();
    try {
      const r = await refusal(rt, { ...ok, command: [''] });
      expect(r).toMatchObject({ code: 'invalid' });
      expect(r.message).toBe('invalid command.0: empty program name');
      // An empty argument after the program is an argument like any other.
      await expect(
        rt.runtime.submit('ann', { ...ok, command: ['echo', ''] }),
      ).resolves.toBeTruthy();
    } finally {
      await rt.close();
    }
  });

  test('any title, argument and env value the schema takes round-trips through the rows', async () => {
    const rt = await boot();
    try {
      // UTF-16 units, lone surrogates and pairs well represented.
      const unit = fc.oneof(
        fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
        fc.constantFrom('\ud800', '\udfff', '\ud83d\ude00', 'é', ' '),
      );
      const text = fc.string({ unit, minLength: 1, maxLength: 12 });
      await fc.assert(
        fc.asyncProperty(text, text, text, async (title, arg, value) => {
          const input = { title, image: 'local', command: ['echo', arg], env: { V: value } };
          let task: Awaited<ReturnType<typeof rt.runtime.submit>>['task'];
          try {
            ({ task } = await rt.runtime.submit('ann', input));
          } catch (error) {
            // Refused up front, as the input's fault: never the store's.
            expect((error as RuntimeCommandError).code).toBe('invalid');
            return;
          }
          expect(task.title).toBe(title);
          const detail = await rt.runtime.taskDetail(null, task.id);
          expect(detail?.title).toBe(title);
          expect(task.spec.command).toEqual(['echo', arg]);
          expect(task.spec.env).toEqual({ V: value });
        }),
        { numRuns: 60 },
      );
      expect(rt.errors).toEqual([]);
    } finally {
      await rt.close();
    }
  });
});
