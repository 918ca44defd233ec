import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { Mailbox } from '../../src/supervisor/Mailbox.js';

type Op = 'post' | 'postAsync' | 'callSync' | 'callSyncThrows' | 'callAsync';
const op = fc.constantFrom<Op>('post', 'postAsync', 'callSync', 'callSyncThrows', 'callAsync');

describe('Mailbox', () => {
  test.prop([fc.array(op, { minLength: 1, maxLength: 25 }), fc.scheduler()])(
    'runs jobs one at a time in submission order; callSync runs at once exactly when idle',
    async (ops, s) => {
      const mailbox = new Mailbox(() => {
        throw new Error('no job here rejects');
      });
      const submitted: number[] = [];
      const started: number[] = [];
      let running = 0;
      let overlaps = 0;
      const wrongFastPath: number[] = [];
      const wrongIdle: number[] = [];
      const settled: Promise<void>[] = [];
      const begin = (i: number) => {
        if (running > 0) overlaps += 1;
        running += 1;
        started.push(i);
      };
      const submit = (kind: Op, i: number) => {
        const idle = mailbox.idle;
        // Idle means nothing runs and nothing waits.
        if (idle && (running > 0 || started.length < submitted.length)) wrongIdle.push(i);
        submitted.push(i);
        if (kind === 'post') {
          mailbox.post(() => {
            begin(i);
            running -= 1;
          });
        } else if (kind === 'postAsync') {
          mailbox.post(() => {
            begin(i);
            return s.schedule(Promise.resolve()).then(() => {
              running -= 1;
            });
          });
        } else if (kind === 'callAsync') {
          const p = mailbox.call(
            () => undefined,
            () => {
              begin(i);
              return s.schedule(Promise.resolve(i)).finally(() => {
                running -= 1;
              });
            },
          );
          settled.push(p.then((v) => expect(v).toBe(i)));
        } else {
          const p = mailbox.callSync(
            () => undefined,
            () => {
              begin(i);
              running -= 1;
              if (kind === 'callSyncThrows') throw new RangeError(`job ${i}`);
              return i;
            },
          );
          if (started.includes(i) !== idle) wrongFastPath.push(i);
          settled.push(
            kind === 'callSync'
              ? p.then((v) => expect(v).toBe(i))
              : p.then(
                  () => expect.unreachable(),
                  (e: unknown) => expect((e as Error).message).toBe(`job ${i}`),
                ),
          );
        }
      };
      ops.forEach((kind, i) => {
        // Half the jobs arrive while earlier ones are still in flight.
        if (i % 2 === 0) submit(kind, i);
        else void s.schedule(Promise.resolve()).then(() => submit(kind, i));
      });
      // A job that starts after the last scheduled task schedules a new one.
      do {
        await s.waitAll();
        for (let k = 0; k < 20; k++) await Promise.resolve();
      } while (s.count() > 0);
      await Promise.all(settled);
      expect(overlaps).toBe(0);
      expect(wrongFastPath).toEqual([]);
      expect(wrongIdle).toEqual([]);
      expect(mailbox.idle).toBe(true);
      expect(started).toEqual(submitted);
    },
  );

  it('refuses a call its admit check rejects, without running it', async () => {
    const mailbox = new Mailbox(() => {});
    let ran = false;
    const gone = new Error('gone');
    await expect(
      mailbox.callSync(
        () => gone,
        () => {
          ran = true;
        },
      ),
    ).rejects.toBe(gone);
    await expect(
      mailbox.call(
        () => gone,
        () => {
          ran = true;
        },
      ),
    ).rejects.toBe(gone);
    expect(ran).toBe(false);
  });

  it('a callSync that throws still frees the mailbox for the next job', async () => {
    const mailbox = new Mailbox(() => {});
    await expect(
      mailbox.callSync(
        () => undefined,
        () => {
          throw new TypeError('bad spec');
        },
      ),
    ).rejects.toThrow('bad spec');
    await expect(
      mailbox.callSync(
        () => undefined,
        () => 42,
      ),
    ).resolves.toBe(42);
  });
});

describe('Mailbox: a failing job frees it', () => {
  it('a job that throws is reported and the jobs behind it still run', () => {
    const failed: unknown[] = [];
    const mailbox = new Mailbox((e) => failed.push(e));
    const ran: string[] = [];
    const boom = new Error('sync boom');
    mailbox.post(() => {
      ran.push('a');
      throw boom;
    });
    mailbox.post(() => {
      ran.push('b');
    });
    expect(ran).toEqual(['a', 'b']);
    expect(failed).toEqual([boom]);
    expect(mailbox.idle).toBe(true);
  });

  it('a job that throws while others wait: the waiting ones run in order', async () => {
    const failed: unknown[] = [];
    const mailbox = new Mailbox((e) => failed.push(e));
    const ran: string[] = [];
    let release = () => {};
    mailbox.post(() => new Promise<void>((r) => (release = r)));
    mailbox.post(() => {
      ran.push('throws');
      throw new Error('queued boom');
    });
    const answer = mailbox.call(
      () => undefined,
      () => 'answered',
    );
    expect(ran).toEqual([]);
    release();
    await expect(answer).resolves.toBe('answered');
    expect(ran).toEqual(['throws']);
    expect(failed).toHaveLength(1);
    expect(mailbox.idle).toBe(true);
  });

  it('a job that rejects is reported once, leaves no unhandled rejection, and frees the mailbox', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const failed: unknown[] = [];
      const mailbox = new Mailbox((e) => failed.push(e));
      const boom = new Error('async boom');
      mailbox.post(async () => {
        await Promise.resolve();
        throw boom;
      });
      const after = mailbox.call(
        () => undefined,
        () => 42,
      );
      await expect(after).resolves.toBe(42);
      expect(failed).toEqual([boom]);
      expect(mailbox.idle).toBe(true);
      await new Promise((r) => setImmediate(r));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
