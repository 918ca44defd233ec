/**
 * `roundtable/testing/contract`: the behaviour every `ContainerBackend`
 * promises, as a vitest suite. The project runs it against each of its
 * backends (test/containers/*), and an application runs it against its own
 * (docs/library.md, examples/custom-backend). A fixture adapts the backend:
 * how time passes, which commands exist, how the engine replaces a container.
 * Needs vitest (an optional peer dependency); `roundtable/testing` does not.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Observation, RunRef } from '../containers/ContainerBackend.js';
import { ContainerError } from '../containers/ContainerError.js';
import { decide } from '../machines/adoptPolicy.js';
import { recoveryAction } from '../machines/recoveryPolicy.js';
import { type ContractFixture, newSessionId, rejection, testNamespace } from './contractFixture.js';

const BUDGET_MS = 15 * 60 * 1000;

export {
  type ContractFixture,
  ContractViolation,
  newSessionId,
  rejection,
  testNamespace,
} from './contractFixture.js';

export function containerContract(name: string, setup: () => ContractFixture): void {
  describe(`ContainerBackend contract: ${name}`, () => {
    const fx = setup();
    const started: RunRef[] = [];

    async function run(tag: string, command: string[]) {
      const sessionId = newSessionId(tag);
      const result = await fx.settle(fx.backend.start({ sessionId, image: fx.image, command }));
      const ref = { handle: result.handle, sessionId };
      started.push(ref);
      return { ref, result };
    }

    async function runToEnd(tag: string, command: string[]) {
      const { ref, result } = await run(tag, command);
      const chunks: string[] = [];
      const exit = await fx.settle(
        fx.backend.attach(ref, { onOutput: (c) => chunks.push(c), timeoutMs: 60_000 }),
      );
      return { ref, result, exit, output: chunks.join('') };
    }

    it('returns a run’s output and exit code whole', async () => {
      const { ref, exit, output, result } = await runToEnd('ok', fx.commands.print('hello', 0));
      expect(exit).toEqual({ exitCode: 0 });
      expect(output).toBe('hello\n');
      expect(result.startedAt).toBeInstanceOf(Date);
      const read = await fx.settle(fx.backend.readOutput(ref));
      expect(read).toEqual({ text: 'hello\n', totalBytes: 6, truncated: false });
      const seen = await fx.settle(fx.backend.observe(ref));
      expect(seen.presence).toBe('present');
      expect(seen.marker).toEqual({ exitCode: 0 });
    });

    it('returns a non-zero exit with its output', async () => {
      const { ref, exit, output } = await runToEnd('nonzero', fx.commands.print('broken', 3));
      expect(exit).toEqual({ exitCode: 3 });
      expect(output).toBe('broken\n');
      expect((await fx.settle(fx.backend.observe(ref))).marker).toEqual({ exitCode: 3 });
    });

    it('returns output larger than 1 MiB whole, live and from the file', async () => {
      const size = 1024 * 1024 + 12_345;
      const { ref, exit, output } = await runToEnd('big', fx.commands.bytes(size));
      expect(exit).toEqual({ exitCode: 0 });
      expect(Buffer.byteLength(output)).toBe(size);
      const read = await fx.settle(fx.backend.readOutput(ref));
      expect(read.truncated).toBe(false);
      expect(read.totalBytes).toBe(size);
      expect(read.text).toBe(output);
    });

    it('rejects a bad session id and an empty command before touching the engine', async () => {
      const bad = await rejection(
        fx.backend.start({ sessionId: 'x; rm -rf /', image: fx.image, command: ['echo'] }),
      );
      expect(bad.code).toBe('invalid_argument');
      const empty = await rejection(
        fx.backend.start({ sessionId: newSessionId('empty'), image: fx.image, command: [] }),
      );
      expect(empty.code).toBe('invalid_argument');
    });

    it('lists the runs it created and removes them idempotently', async () => {
      const { ref } = await run('list', fx.commands.long('waiting'));
      const handles = await fx.settle(fx.backend.listHandles());
      expect(handles).toContainEqual(ref);
      await fx.settle(fx.backend.remove(ref));
      await fx.settle(fx.backend.remove(ref));
      const seen = await fx.settle(fx.backend.observe(ref));
      expect(seen.presence).toBe('absent');
      expect(await fx.settle(fx.backend.listHandles())).not.toContainEqual(ref);
    });

    it('never lists or re-pins the runs of another namespace on the same engine', async () => {
      const other = fx.inNamespace(testNamespace('other'));
      expect(other.namespace).not.toBe(fx.backend.namespace);
      const { ref: mine } = await run('ns-mine', fx.commands.long('mine'));
      const theirsId = newSessionId('ns-theirs');
      const theirs = {
        handle: (
          await fx.settle(
            other.start({ sessionId: theirsId, image: fx.image, command: fx.commands.long('b') }),
          )
        ).handle,
        sessionId: theirsId,
      };
      try {
        const mineSeen = await fx.settle(fx.backend.listHandles());
        expect(mineSeen).toContainEqual(mine);
        expect(mineSeen.map((r) => r.sessionId)).not.toContain(theirsId);
        // A fresh namespace: its listing is exactly its one run, nobody else's.
        expect(await fx.settle(other.listHandles())).toEqual([theirs]);
        if (fx.newerImage) {
          const repinned = await fx.settle(fx.backend.repin(fx.newerImage));
          expect(repinned).toContainEqual({ ...mine, previousImage: fx.image });
          expect(repinned.map((r) => r.sessionId)).not.toContain(theirsId);
          // Still on the old image: had the first repin touched it, this would be empty.
          expect(await fx.settle(other.repin(fx.newerImage))).toEqual([
            { ...theirs, previousImage: fx.image },
          ]);
          expect(
            (await fx.settle(fx.backend.repin(fx.newerImage))).map((r) => r.sessionId),
          ).not.toContain(theirsId);
        }
      } finally {
        await fx.settle(other.remove(theirs));
      }
      expect(await fx.settle(other.listHandles())).toEqual([]);
    });

    it('answers a ping while its engine is up', async () => {
      expect(await fx.settle(fx.backend.ping())).toEqual({ ok: true });
    });

    const unknownImage = fx.unknownImage;
    if (unknownImage)
      it('fails a start on an image the engine cannot get fast, as rejected, with its reason', async () => {
        const sessionId = newSessionId('noimage');
        const began = Date.now();
        const refused = await rejection(
          fx.settle(
            fx.backend.start({
              sessionId,
              image: unknownImage,
              command: fx.commands.print('x', 0),
            }),
          ),
        );
        expect(refused.code).toBe('rejected');
        expect(refused.message).toMatch(/no such image/i);
        expect(refused.message).toContain(unknownImage);
        // Long before the 120 s start timeout: the engine's refusal ends the wait.
        expect(Date.now() - began).toBeLessThan(30_000);
        // Nothing left behind for the engine to retry or the sweep to find.
        const handles = await fx.settle(fx.backend.listHandles());
        expect(handles.map((r) => r.sessionId)).not.toContain(sessionId);
      });

    const unreachable = fx.unreachable?.bind(fx);
    // A backend with no engine (local) has nothing to be unreachable.
    if (unreachable) {
      it('fails ping and start on an unreachable engine as unavailable or timeout', async () => {
        const backend = unreachable();
        const ping = await fx.settle(backend.ping());
        expect(ping).toMatchObject({ ok: false, message: expect.any(String) });
        expect(['unavailable', 'timeout']).toContain(ping.ok ? 'ok' : ping.code);
        const start = await rejection(
          fx.settle(
            backend.start({
              sessionId: newSessionId('down'),
              image: fx.image,
              command: fx.commands.print('x', 0),
            }),
          ),
        );
        expect(['unavailable', 'timeout']).toContain(start.code);
      });

      it('reports an unreachable engine as unknown, never absent', async () => {
        const backend = unreachable();
        const seen = await fx.settle(
          backend.observe({ handle: 'rt-nowhere', sessionId: 'nowhere' }),
        );
        expect(seen.presence).toBe('unknown');
        expect(seen.error).toBeInstanceOf(ContainerError);
        expect(['unavailable', 'timeout']).toContain(seen.error?.code);
        const list = await rejection(fx.settle(backend.listHandles()));
        expect(['unavailable', 'timeout']).toContain(list.code);
      });
    }

    if (fx.backend.adoptable) {
      it('after a restart, observe finds the marker and readOutput the output', async () => {
        const { ref, result } = await run('adopt', fx.commands.print('survived', 4));
        const after = fx.restarted();
        // Found by the session's name alone, as for a row whose handle was never written.
        expect(after.handleOf(ref.sessionId)).toBe(ref.handle);
        const notMine = await rejection(after.attach(ref));
        expect(notMine.code).toBe('not_attached');
        const seen = await fx.eventually(async () => {
          const o = await after.observe(ref);
          return o.marker ? o : undefined;
        }, 60_000);
        expect(seen.presence).toBe('present');
        expect(seen.marker).toEqual({ exitCode: 4 });
        expect(decide(seen.containerStartedAt, result.startedAt, 0, BUDGET_MS)).toEqual({
          kind: 'poll',
        });
        expect((await fx.settle(after.readOutput(ref))).text).toBe('survived\n');
        expect(
          recoveryAction({
            backend: after.kind,
            kind: 'run',
            handle: ref.handle,
            presence: 'present',
          }),
        ).toBe('adopt');
      });
    } else {
      it(`cannot be adopted after a restart (${name} runs die with their owner)`, async () => {
        const { ref } = await run('noadopt', fx.commands.long('busy'));
        const after = fx.restarted();
        expect((await fx.settle(after.observe(ref))).presence).toBe('absent');
        expect(
          recoveryAction({
            backend: after.kind,
            kind: 'run',
            handle: ref.handle,
            presence: 'present',
          }),
        ).toBe('fail');
      });
    }

    const replace = fx.replaceContainer?.bind(fx);
    if (replace) {
      it('a replaced container shows a later start and no marker: decide gives up at once', async () => {
        const { ref, result } = await run('resched', fx.commands.long('working'));
        // Handled from the start: the owner's attach fails as soon as the container dies.
        const owner = rejection(fx.backend.attach(ref, { timeoutMs: 120_000 }));
        await replace(ref);
        const lost = await fx.settle(owner);
        expect(lost.code).toBe('exec_lost');
        const after = fx.restarted();
        const seen: Observation = await fx.eventually(async () => {
          const o = await after.observe(ref);
          const started = o.containerStartedAt?.getTime() ?? 0;
          return started > result.startedAt.getTime() ? o : undefined;
        }, 60_000);
        expect(seen.presence).toBe('present');
        expect(seen.marker).toBeNull();
        expect(decide(seen.containerStartedAt, result.startedAt, 0, BUDGET_MS)).toEqual({
          kind: 'give_up',
          reason: 'container_replaced',
        });
        if (fx.execCount) expect(fx.execCount(ref.sessionId)).toBe(1);
      });
    }

    const newer = fx.newerImage;
    if (newer) {
      it('re-pins runs to a newer image, replacing their containers', async () => {
        const { ref, result } = await run('repin', fx.commands.long('old image'));
        const repinned = await fx.settle(fx.backend.repin(newer));
        expect(repinned).toContainEqual({ ...ref, previousImage: fx.image });
        const seen = await fx.eventually(async () => {
          const o = await fx.backend.observe(ref);
          const started = o.containerStartedAt?.getTime() ?? 0;
          return started > result.startedAt.getTime() ? o : undefined;
        }, 60_000);
        expect(decide(seen.containerStartedAt, result.startedAt, 0, BUDGET_MS)).toEqual({
          kind: 'give_up',
          reason: 'container_replaced',
        });
        expect(await fx.settle(fx.backend.repin(newer))).not.toContainEqual(
          expect.objectContaining({ handle: ref.handle }),
        );
      });
    }

    afterAll(async () => {
      for (const ref of started) await fx.settle(fx.backend.remove(ref));
      const left = await fx.settle(fx.backend.listHandles());
      expect(left.filter((r) => started.some((s) => s.sessionId === r.sessionId))).toEqual([]);
    });
  });
}
