/**
 * The board page on the real runtime: PGlite in memory, a simulated Swarm
 * and a virtual clock, served by createUiServer, driven in Debian's chromium
 * through playwright-core (never a downloaded browser). The fake board next
 * door proves the page; this proves the runtime's cards say the same things.
 *
 * The runtime's clock is virtual and moves only when the test says so; the
 * server and the browser live in real time, and every wait on the page is a
 * playwright deadline. Between two moves of the clock the board is still, so
 * each wait looks at one settled state.
 */
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { pino } from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../../src/actors/runtime.js';
import type { Runtime } from '../../../src/actors/runtimeTypes.js';
import type { BoardCard } from '../../../src/board/boardPort.js';
import { defaultCommands, type SimCommand } from '../../../src/containers/simulated/commands.js';
import { SimulatedBackend } from '../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../../src/db/index.js';
import { migratedPglite } from '../../../src/testing/migratedPglite.js';
import { TestClock } from '../../../src/testing/TestClock.js';
import { createUiServer, type UiServer } from '../../../src/ui-server/createUiServer.js';
import { axeViolations } from '../../support/axe.js';
import { chromiumSkipReason, launchChromium } from '../../support/chromium.js';

const skipReason = chromiumSkipReason('board runtime browser test');

const TOKENS = {
  users: { alice: 'alice-token-0123456789', bob: 'bob-token-0123456789ab' },
  admin: 'admin-token-0123456789',
};
const ALICE = 'alice-token-0123456789';
const BOB = 'bob-token-0123456789ab';
const STEP_MS = 10_000;
const ARTIFACT = new URL('../../artifacts/board-runtime.png', import.meta.url);

/** Fails its first run and passes every later one: what a retry is for. */
function flakyCommand(): SimCommand {
  let runs = 0;
  return () => {
    runs += 1;
    return runs === 1
      ? { output: [{ atMs: 0, text: 'Error: snapshot mismatch\n' }], durationMs: 0, exitCode: 2 }
      : { output: [{ atMs: 0, text: 'all 12 tests passed\n' }], durationMs: 0, exitCode: 0 };
  };
}

/**
 * What the page was told, card by card, must tell a story the page can show:
 * waiting XOR holding a runner, a session only moves forward (queued,
 * running, finished), and its place in line never grows.
 */
function storyProblems(history: readonly BoardCard[]): string[] {
  const problems: string[] = [];
  const rank = { queued: 0, running: 1, done: 2, failed: 2 } as const;
  const last = new Map<string, BoardCard>();
  for (const [i, c] of history.entries()) {
    const at = `#${i} ${c.title} attempt ${c.attempt}`;
    if (c.queued !== null && c.running !== null) problems.push(`${at}: queued and running`);
    if ((c.failure !== null) !== (c.status === 'failed')) problems.push(`${at}: failure vs status`);
    const before = last.get(c.sessionId);
    if (before !== undefined) {
      if (rank[c.column] < rank[before.column]) {
        problems.push(`${at}: ${before.column} -> ${c.column}`);
      }
      const was = before.queued?.position;
      const is = c.queued?.position;
      if (was !== undefined && is !== undefined && is > was) {
        problems.push(`${at}: position ${was} -> ${is}`);
      }
    }
    last.set(c.sessionId, c);
  }
  return problems;
}

/**
 * The moments the board showed one user (cap 1) holding two runners: a card
 * still running, or granted ("starting", position 0), beside another.
 */
function heldAtOnce(history: readonly BoardCard[]): string[] {
  const latest = new Map<string, BoardCard>();
  const moments: string[] = [];
  for (const [i, c] of history.entries()) {
    latest.set(c.taskId, c);
    const holding = [...latest.values()].filter(
      (x) => x.running !== null || x.queued?.position === 0,
    );
    if (holding.length > 1) moments.push(`#${i}: ${holding.map((x) => x.title).join(' + ')}`);
  }
  return moments;
}

describe.skipIf(skipReason !== null)(
  `board page on the real runtime, in chromium${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let browser: Browser;
    let page: Page;
    let pglite: PGlite;
    let handle: DbHandle;
    let runtime: Runtime;
    let server: UiServer;
    let clock: TestClock;
    const errors: unknown[] = [];
    /** Every card of alice's the runtime published, in order. */
    const story: BoardCard[] = [];
    let storyComplete = false;

    /** Turns of the event loop until no I/O is in flight (never real time as such). */
    const settle = async () => {
      let quiet = 0;
      for (let i = 0; i < 20_000 && quiet < 3; i++) {
        await new Promise<void>((r) => setImmediate(r));
        quiet = runtime.busy() === 0 ? quiet + 1 : 0;
      }
      if (quiet < 3) throw new Error('runtime did not settle');
    };
    /** Moves the runtime's clock, firing its timers in order. */
    const advance = async (ms: number) => {
      const target = clock.now() + ms;
      await settle();
      for (let due = clock.nextDue(target); due !== null; due = clock.nextDue(target)) {
        clock.fireNext(due);
        await settle();
      }
      clock.fireNext(target);
      await settle();
    };

    /** The page's HTTP API, as any client calls it. */
    const api = async (token: string, method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        signal: AbortSignal.timeout(STEP_MS),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text === '' ? null : (JSON.parse(text) as Record<string, unknown>);
    };
    const create = async (token: string, title: string, command: string[]) => {
      const created = await api(token, 'POST', '/api/tasks', { title, image: 'alpine:3', command });
      await settle();
      return String(created?.taskId);
    };

    const card = (column: string, taskId: string) =>
      page.locator(`section[data-column="${column}"] article[data-task-id="${taskId}"]`);
    const waitCard = (column: string, taskId: string, ...texts: string[]) => {
      let locator = card(column, taskId);
      for (const text of texts) locator = locator.filter({ hasText: text });
      return locator.waitFor({ timeout: STEP_MS }).catch(async (err: unknown) => {
        const board = await page
          .locator('main')
          .textContent({ timeout: 1000 })
          .catch(() => '?');
        throw new Error(
          `no ${column} card ${taskId} with ${JSON.stringify(texts)}; page:\n${board}`,
          {
            cause: err,
          },
        );
      });
    };

    beforeAll(async () => {
      // Virtual time starts a little before real time, so the page's waiting
      // and running times (read on the browser's clock) read sensibly.
      clock = new TestClock(Date.now() - 10 * 60_000);
      pglite = await migratedPglite();
      handle = await connect({ pglite });
      await migrate(handle.db);
      runtime = await createRuntime({
        db: handle.db,
        backend: new SimulatedBackend(
          new SimulatedCluster({ clock, commands: { ...defaultCommands, flaky: flakyCommand() } }),
        ),
        clock,
        caps: { maxRunning: 4, defaultUserCap: 2 },
        nodeId: 'board-node',
        bootId: 'boot1',
        onError: (e) => errors.push(e),
      });
      await settle();
      server = await createUiServer({
        source: runtime,
        commands: runtime,
        tokens: TOKENS,
        port: 0,
        host: '127.0.0.1',
        logger: pino({ level: 'silent' }),
      });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      runtime?.kill();
      await handle?.close();
      await pglite?.close();
    });

    it('waits in line with positions, runs with live output, fails with a reason, retries, and finishes', async () => {
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      await api(TOKENS.admin, 'PUT', '/api/users/alice/cap', { maxRunning: 1 });
      const unsubscribe = runtime.subscribe((c) => {
        if (c.userId === 'alice') story.push(structuredClone(c));
      });

      await page.goto(`${server.url}/#token=${ALICE}`, { timeout: STEP_MS });
      await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });

      // Three tasks beyond alice's cap of 1, and two of bob's that run beside them.
      const build = await create(ALICE, 'build api', ['agent', '20']);
      const agent = await create(ALICE, 'run agent', ['agent', '20']);
      const flaky = await create(ALICE, 'flaky tests', ['flaky']);
      const bobs = [
        await create(BOB, 'bob’s job', ['agent', '10']),
        await create(BOB, 'bob’s other job', ['sleep', '30']),
      ];

      await waitCard('running', build);
      // First in line, yet not next: alice holds her one runner.
      const atCap = 'you are at your cap (1 of 1 running)';
      await waitCard('queued', agent, 'waiting · position 1', atCap);
      await waitCard('queued', flaky, 'waiting · position 2', atCap);
      // A screen reader, stopping on the card, hears why it waits too.
      expect(await card('queued', agent).getAttribute('aria-label')).toBe(
        `run agent, queued, position 1, ${atCap}`,
      );
      // The cap's line reads like the card's other lines, to axe too.
      expect(await axeViolations(page)).toEqual([]);

      // Live output: the agent narrates while it holds the runner.
      await advance(5_000);
      await waitCard('running', build, 'cloning the repository');
      await card('running', build)
        .locator('pre', { hasText: 'installing dependencies' })
        .waitFor({ timeout: STEP_MS });

      // It finishes: the next turns running, the last moves up.
      await advance(16_000);
      await waitCard('done', build, 'succeeded · exit 0', '[agent] done');
      await waitCard('running', agent);
      await waitCard('queued', flaky, 'waiting · position 1', atCap);

      // A command that exits non-zero lands in failed, with its reason.
      await advance(21_000);
      await waitCard('done', agent, 'succeeded · exit 0');
      await waitCard('failed', flaky, 'failed: exit_code · exit 2', 'Error: snapshot mismatch');

      // Another task holds the runner while the failed one is retried from the page.
      const gaveUp = await create(ALICE, 'agent that gives up', ['agent', '10', '4']);
      await waitCard('running', gaveUp);
      await advance(3_000);
      await waitCard('running', gaveUp, 'cloning the repository');
      await card('failed', flaky).locator('button.retry').click({ timeout: STEP_MS });
      await waitCard('queued', flaky, 'waiting · position 1', 'attempt 2');
      await settle();
      mkdirSync(new URL('.', ARTIFACT), { recursive: true });
      await page.screenshot({ path: ARTIFACT.pathname, fullPage: true });

      // Everything ends where it should: the give-up failed, the retry passed.
      await advance(8_000);
      await waitCard('failed', gaveUp, 'failed: exit_code', '[agent] gave up');
      await advance(1_000);
      await waitCard('done', flaky, 'succeeded · exit 0', 'attempt 2');
      await advance(30_000);
      for (const id of [build, agent, flaky]) await waitCard('done', id);
      await waitCard('failed', gaveUp);
      expect(await page.locator('section[data-column="queued"] article').count()).toBe(0);
      expect(await page.locator('section[data-column="running"] article').count()).toBe(0);
      expect(await page.locator('article').count()).toBe(4);

      // Bob's tasks ran, and never reached alice's page.
      const bobCards = runtime.cards('bob');
      expect(bobCards.map((c) => [c.taskId, c.column])).toEqual(
        expect.arrayContaining(bobs.map((id) => [id, 'done'])),
      );
      for (const id of bobs) expect(await page.locator(`[data-task-id="${id}"]`).count()).toBe(0);
      expect(await page.locator('article', { hasText: 'bob’s' }).count()).toBe(0);

      unsubscribe();
      storyComplete = true;
      expect(storyProblems(story)).toEqual([]);
      expect(pageErrors).toEqual([]);
      expect(errors).toEqual([]);
    }, 40_000);

    // The fake board finishes a card synchronously; the runtime did not: up to
    // 8bfbeb8 a finished card was re-read from the database (board.refresh) while
    // its slot was released at once, so the next card's grant ("starting",
    // position 0) was published before the finish, out of commit order, and for
    // one round trip the board said a user with a cap of 1 held two runners.
    // 5f05a99 feeds the board from the rows the writes return; this keeps it so.
    it('never shows a user with a cap of 1 holding two runners (a finish is published before the next grant)', () => {
      // A scenario that broke off is reported by the test above, not here.
      if (!storyComplete) throw new Error('the scenario did not finish: nothing to check');
      expect(heldAtOnce(story)).toEqual([]);
    });
  },
);
