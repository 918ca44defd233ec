/**
 * The issue's browser test, on the real runtime: a simulated Swarm, PGlite
 * in memory, the runtime's own supervision tree, mounted on the board's UI
 * server with createUiServer({ inspector }). Open /inspect, select the
 * RunnerPool, crash it through the page's exit button (the admin API), see
 * its restart count rise and its statechart lit anew on the new
 * incarnation; then a task created after the crash still completes.
 *
 * Debian's chromium via playwright-core, as the workload test next door.
 * The runtime runs on a virtual clock the test moves; the inspector and the
 * browser live in real time, and every wait is a playwright deadline.
 */
import { mkdirSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { pino } from 'pino';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRuntime } from '../../../../src/actors/runtime.js';
import type { Runtime } from '../../../../src/actors/runtimeTypes.js';
import { SimulatedBackend } from '../../../../src/containers/simulated/SimulatedBackend.js';
import { SimulatedCluster } from '../../../../src/containers/simulated/SimulatedCluster.js';
import { connect, type DbHandle, migrate } from '../../../../src/db/index.js';
import { migratedPglite } from '../../../../src/testing/migratedPglite.js';
import { TestClock } from '../../../../src/testing/TestClock.js';
import { createUiServer, type UiServer } from '../../../../src/ui-server/createUiServer.js';
import {
  createInspector,
  type Inspector,
} from '../../../../src/ui-server/inspector/createInspector.js';
import { chromiumSkipReason, launchChromium } from '../../../support/chromium.js';

const skipReason = chromiumSkipReason('inspector runtime browser test');

const ADMIN = 'admin-token-0123456789';
const STEP_MS = 10_000;
const ARTIFACT = new URL('../../../artifacts/inspector-runtime.png', import.meta.url).pathname;

describe.skipIf(skipReason !== null)(
  `inspector page on the real runtime, in chromium${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let browser: Browser;
    let page: Page;
    let pglite: PGlite;
    let handle: DbHandle;
    let runtime: Runtime;
    let inspector: Inspector;
    let server: UiServer;
    let clock: TestClock;
    const errors: unknown[] = [];

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

    beforeAll(async () => {
      clock = new TestClock();
      // The inspector flushes on the real clock: the browser lives in real time.
      inspector = createInspector({ flushMs: 50, treeIntervalMs: 50 });
      pglite = await migratedPglite();
      handle = await connect({ pglite });
      await migrate(handle.db);
      runtime = await createRuntime({
        db: handle.db,
        backend: new SimulatedBackend(new SimulatedCluster({ clock })),
        clock,
        caps: { maxRunning: 4, defaultUserCap: 2 },
        nodeId: 'inspect-node',
        bootId: 'boot1',
        inspect: inspector.observer,
        onError: (e) => errors.push(e),
      });
      await settle();
      server = await createUiServer({
        source: runtime,
        commands: runtime,
        tokens: { admin: ADMIN, users: {} },
        port: 0,
        host: '127.0.0.1',
        logger: pino({ level: 'silent' }),
        inspector,
      });
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
    });

    afterAll(async () => {
      await browser?.close();
      await server?.close();
      runtime?.kill();
      await handle?.close();
      await pglite?.close();
    });

    it('crashes the RunnerPool from the page: restart count rises, state lit anew, tasks still complete', async () => {
      const pageErrors: string[] = [];
      page.on('pageerror', (err) => pageErrors.push(err.message));
      // A long job holds a slot: the pool monitors its runner.
      const long = await runtime.submit('alice', {
        title: 'long job',
        image: 'alpine:3',
        command: ['sleep', '600'],
      });
      await settle();

      await page.goto(`${server.url}/inspect#token=${ADMIN}`);
      await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
      const pool = page.locator('li[data-child="root/runnerPool"]');
      await pool.and(page.locator('[data-restarts="0"]')).waitFor({ timeout: STEP_MS });
      const firstSession = await pool.getAttribute('data-session');
      // The pool's monitor of the long job's runner is drawn: pool -> runner.
      await page
        .locator(`#monitor-list li[data-watcher="${firstSession}"]`, { hasText: long.session.id })
        .waitFor({ timeout: STEP_MS });

      await pool.locator('> .node').click();
      const state = (id: string) => page.locator(`#chart g.state.active[data-state-id="${id}"]`);
      await state('runnerPool.ready').waitFor({ timeout: STEP_MS });

      // Crash it through the page's button (POST /inspect/api/exit, admin token).
      await page.locator('#actions:not([hidden]) #exit').click();
      await page
        .locator('#exit-result', { hasText: 'exited: killed' })
        .waitFor({ timeout: STEP_MS })
        .catch(async (err: unknown) => {
          throw new Error(`exit result: ${await page.locator('#exit-result').textContent()}`, {
            cause: err,
          });
        });
      await settle();
      await pool.and(page.locator('[data-restarts="1"]')).waitFor({ timeout: STEP_MS });
      const secondSession = await pool.getAttribute('data-session');
      expect(secondSession).not.toBe(firstSession);
      // The selection followed the restart: the new incarnation's chart, lit anew.
      await page.locator('#actor-title', { hasText: secondSession! }).waitFor({ timeout: STEP_MS });
      await state('runnerPool.ready').waitFor({ timeout: STEP_MS });
      await pool.locator('.exit', { hasText: 'killed' }).waitFor({ timeout: STEP_MS });
      await page
        .locator('#timeline tr.alarm[data-kind="exit"]', { hasText: 'killed' })
        .waitFor({ timeout: STEP_MS });
      await page
        .locator('#timeline tr[data-kind="start"]', { hasText: 'restarted (restart #1)' })
        .waitFor({ timeout: STEP_MS });

      // The runtime keeps working: a task created after the crash completes.
      const after = await runtime.submit('bob', {
        title: 'after the crash',
        image: 'alpine:3',
        command: ['echo', 'still here'],
      });
      const status = () =>
        runtime.cards(null).find((c) => c.sessionId === after.session.id)?.status;
      for (let i = 0; i < 60 && status() !== 'succeeded'; i++) await advance(1000);
      expect(status()).toBe('succeeded');
      // The new pool monitors the long job's runner again; the dead pool's edge is gone.
      await page
        .locator(`#monitor-list li[data-watcher="${secondSession}"]`, { hasText: long.session.id })
        .waitFor({ timeout: STEP_MS });
      expect(await page.locator(`#monitor-list li[data-watcher="${firstSession}"]`).count()).toBe(
        0,
      );

      // Runners are named by their job and user (the board's cards), live first, ended folded.
      const runner = page.locator(`li[data-child="taskRunners/${long.session.id}"]`);
      await runner
        .and(page.locator(`[data-task="${long.task.id}"]`))
        .locator('> .node', { hasText: 'long job' })
        .and(page.locator('.node', { hasText: 'alice' }))
        .waitFor({ timeout: STEP_MS });
      await page
        .locator('li[data-supervisor="taskRunners"] li[data-ended="1"]')
        .waitFor({ timeout: STEP_MS });
      expect(await page.locator(`li[data-child="taskRunners/${after.session.id}"]`).count()).toBe(
        0,
      );
      // The runner's page links its job on the board.
      await runner.locator('> .node').click();
      await page.locator('body[data-chart="drawn"]').waitFor({ timeout: STEP_MS });
      await page
        .locator('#chart g.state.active[data-state-id="taskRunner.running"]')
        .waitFor({ timeout: STEP_MS });
      expect(await page.locator('#job-link').getAttribute('href')).toBe(`/#/jobs/${long.task.id}`);

      mkdirSync(new URL('.', `file://${ARTIFACT}`).pathname, { recursive: true });
      await page.screenshot({ path: ARTIFACT, fullPage: true });
      // Following the link opens the job on the admin board, with no token in the URL.
      await page.locator('#job-link').click();
      await page.waitForURL(`${server.url}/#/jobs/${long.task.id}`, { timeout: STEP_MS });
      await page.locator('body[data-view="admin"]').waitFor({ timeout: STEP_MS });
      expect(pageErrors).toEqual([]);
      expect(errors).toEqual([]);
    });
  },
);
