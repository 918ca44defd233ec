/**
 * The local backend, side by side with what it wraps.
 *
 * - Start: enqueue to first output line of `echo hi`, three ways interleaved
 *   in one run: a bare `child_process.spawn` of the wrapper (stdout piped),
 *   `LocalBackend.start` + `attach` (detached, output followed from the
 *   file), and the whole runtime on PGlite (`runtime.submit` to the card's
 *   first output line: a tick, a grant, the start, the board).
 * - Adoption: 200 runs going (`echo started; sleep 600`), their runtime
 *   stopped; a new runtime over the same rows and run directory, timed from
 *   `createRuntime` to its boot pass (`booted`) having adopted all 200, and
 *   from ready (`createRuntime` resolved) to every card showing its run's
 *   line again (fenced, runner attached, output followed); medians of
 *   ROUNDS rounds, the load average stated.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime } from '../../src/actors/runtime.js';
import type { Runtime } from '../../src/actors/runtimeTypes.js';
import { LocalBackend } from '../../src/containers/local/LocalBackend.js';
import { parseLocalHandle } from '../../src/containers/local/localHandle.js';
import { wrapperArgv, wrapperEnv } from '../../src/containers/wrapper.js';
import { connect, type DbHandle, migrate } from '../../src/db/index.js';
import { systemClock } from '../../src/supervisor/clock.js';
import { median, percentile, writeResults } from '../stats.js';

const RUNS = Number(process.env.ROUNDTABLE_BENCH_LOCAL_RUNS ?? 40);
const ADOPT = Number(process.env.ROUNDTABLE_BENCH_LOCAL_ADOPT ?? 200);
const ROUNDS = Number(process.env.ROUNDTABLE_BENCH_LOCAL_ROUNDS ?? 3);
const COMMAND = ['echo', 'hi'];

function bare(dir: string, i: number): Promise<number> {
  const [file, ...args] = wrapperArgv(COMMAND);
  const runDir = join(dir, `bare-${i}`);
  mkdirSync(runDir);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file as string, args, {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...wrapperEnv(`bare-${i}`, {}, runDir) },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child.stdout.once('data', () => resolve(performance.now() - t0));
    child.on('error', reject);
  });
}

async function viaBackend(backend: LocalBackend, i: number): Promise<number> {
  const t0 = performance.now();
  const sessionId = `be-${i}`;
  const { handle } = await backend.start({ sessionId, image: 'host', command: COMMAND });
  let first = 0;
  await backend.attach(
    { handle, sessionId },
    {
      onOutput: () => {
        if (first === 0) first = performance.now() - t0;
      },
    },
  );
  await backend.remove({ handle, sessionId });
  return first;
}

interface Node {
  runtime: Runtime;
  db: DbHandle;
  backend: LocalBackend;
}

async function node(db: DbHandle, baseDir: string, maxRunning: number): Promise<Node> {
  const backend = new LocalBackend({ baseDir });
  const runtime = await createRuntime({
    db: db.db,
    backend,
    clock: systemClock,
    caps: { maxRunning, defaultUserCap: maxRunning },
    nodeId: 'bench-local',
    pollMs: 1_000,
    onError: (e) => process.stderr.write(`local bench runtime error: ${String(e)}\n`),
  });
  await runtime.booted;
  return { runtime, db, backend };
}

function viaRuntime(n: Node, i: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    let taskId: string | undefined;
    const off = n.runtime.subscribe((card) => {
      if (card.taskId === taskId && card.lastOutput.length > 0) {
        off();
        resolve(performance.now() - t0);
      }
    });
    n.runtime
      .submit('bench', { title: `start ${i}`, image: 'host', command: COMMAND })
      .then((created) => {
        taskId = created.task.id;
      }, reject);
  });
}

const ms = (v: number) => v.toFixed(1);

export async function run(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rt-bench-local-'));
  const db = await connect({ dataDir: join(dir, 'pgdata') });
  try {
    await migrate(db.db);
    const backend = new LocalBackend({ baseDir: join(dir, 'backend') });
    const n = await node(db, join(dir, 'runs'), 8);
    const times = { bare: [] as number[], backend: [] as number[], runtime: [] as number[] };
    for (let i = 0; i < RUNS; i++) {
      times.bare.push(await bare(dir, i));
      times.backend.push(await viaBackend(backend, i));
      times.runtime.push(await viaRuntime(n, i));
    }
    await n.runtime.stop();
    n.backend.close();
    backend.close();

    // Adoption: 200 runs going, the runtime that started them stopped, a new one adopts.
    const adoptRuns: number[] = [];
    const attachedRuns: number[] = [];
    let observeMs = 0;
    let present = 0;
    let adopted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const first = await node(db, join(dir, 'runs'), ADOPT);
      for (let i = 0; i < ADOPT; i++) {
        await first.runtime.submit('bench', {
          title: `hold ${i}`,
          image: 'host',
          command: ['sh', '-c', 'echo started; exec sleep 600'],
        });
      }
      let handles: string[] = [];
      for (;;) {
        const rows = await db.db
          .selectFrom('sessions')
          .select('handle')
          .where('status', '=', 'running')
          .where('handle', 'is not', null)
          .execute();
        if (rows.length >= ADOPT) {
          handles = rows.map((r) => r.handle as string);
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      await first.runtime.stop();
      first.backend.close();
      // The backend's share: a fresh backend observes every run (pid, start time, marker).
      const sessions = await db.db
        .selectFrom('sessions')
        .select(['id', 'handle'])
        .where('status', '=', 'running')
        .execute();
      const fresh = new LocalBackend({ baseDir: join(dir, 'runs') });
      const o0 = performance.now();
      const seen = await Promise.all(
        sessions.map((r) => fresh.observe({ sessionId: r.id, handle: r.handle as string })),
      );
      observeMs = performance.now() - o0;
      present = seen.filter((o) => o.presence === 'present' && o.marker === null).length;
      // A new boot: from createRuntime to its boot pass; and from the node
      // ready (createRuntime resolved) to every card showing its run's line
      // again (adopted and followed: re-attached).
      const t0 = performance.now();
      const backend2 = new LocalBackend({ baseDir: join(dir, 'runs') });
      const runtime2 = await createRuntime({
        db: db.db,
        backend: backend2,
        clock: systemClock,
        caps: { maxRunning: ADOPT, defaultUserCap: ADOPT },
        nodeId: 'bench-local',
        pollMs: 1_000,
        onError: (e) => process.stderr.write(`local bench runtime error: ${String(e)}\n`),
      });
      const ready = performance.now();
      const report = await runtime2.booted;
      adoptRuns.push(performance.now() - t0);
      adopted = report.adopted.length;
      for (;;) {
        const showing = runtime2
          .cards(null)
          .filter((c) => c.status === 'running' && c.lastOutput.includes('started')).length;
        if (showing >= ADOPT) break;
        await new Promise((r) => setTimeout(r, 10));
      }
      attachedRuns.push(performance.now() - ready);
      await runtime2.stop();
      backend2.close();
      for (const h of handles) {
        const pid = parseLocalHandle(h)?.pid;
        if (pid !== undefined) {
          try {
            process.kill(-pid, 'SIGKILL');
          } catch {}
        }
      }
      // The killed runs are failed by the next round's boot pass (no marker): cleared here instead.
      await db.db
        .updateTable('sessions')
        .set({ status: 'cancelled' })
        .where('status', '=', 'running')
        .execute();
    }
    const adoptMs = median(adoptRuns);
    const attachedMs = median(attachedRuns);
    const load = readFileSync('/proc/loadavg', 'utf8').trim();

    const row = (name: string, v: number[]) =>
      `| ${name} | ${ms(median(v))} | ${ms(percentile(v, 99))} | ${(median(v) / median(times.bare)).toFixed(2)}x |`;
    const md = [
      `# Local backend (${RUNS} starts each, interleaved; \`${COMMAND.join(' ')}\`)`,
      '',
      '| to the first output line | median ms | p99 ms | median vs bare |',
      '|---|---|---|---|',
      row('bare `child_process.spawn` of the wrapper (stdout pipe)', times.bare),
      row('`LocalBackend.start` + `attach` (detached, file followed)', times.backend),
      row('`runtime.submit` to the card’s first line (PGlite)', times.runtime),
      '',
      `Adoption: ${ADOPT} local runs going (\`echo started; sleep 600\`), medians of ${ROUNDS} rounds. A fresh backend observes all of them (${present} present, running) in ${ms(observeMs)} ms; a new runtime over the same rows goes from createRuntime to booted, ${adopted} adopted, in ${ms(adoptMs)} ms, and from ready (createRuntime resolved) to every card showing its run's line again (fenced, runner attached, output followed) in ${ms(attachedMs)} ms (rounds: ${attachedRuns.map(ms).join(', ')}). Load average at the end: ${load}.`,
    ].join('\n');
    process.stdout.write(`${md}\n`);
    writeResults(
      'local',
      {
        times,
        adoptMs,
        attachedMs,
        adoptRounds: adoptRuns,
        attachedRounds: attachedRuns,
        adopted,
        observeMs,
        present,
        load,
        runs: RUNS,
        adoptRuns: ADOPT,
      },
      md,
    );
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
