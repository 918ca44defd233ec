/**
 * The inspector page in a real browser: Debian's chromium driven by
 * playwright-core (never a downloaded browser). Skipped, with the reason
 * printed, when chromium is missing outside CI; in CI a missing chromium fails.
 *
 * The workload runs on the real clock here (the browser lives in real time);
 * every wait is a playwright deadline, never a sleep.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Supervisor } from '../../../../src/supervisor/Supervisor.js';
import { startSupervisor } from '../../../../src/supervisor/startSupervisor.js';
import { createAuthenticator } from '../../../../src/ui-server/authenticate.js';
import {
  createInspector,
  type Inspector,
  type InspectorRoutes,
} from '../../../../src/ui-server/inspector/createInspector.js';
import { chromiumSkipReason, launchChromium } from '../../../support/chromium.js';
import { job } from '../fixtures.js';

const skipReason = chromiumSkipReason('inspector page browser test');

const ADMIN = 'admin-token-0123456789';
const STEP_MS = 5000;
const ARTIFACT = new URL('../../../artifacts/inspector.png', import.meta.url).pathname;

describe.skipIf(skipReason !== null)(
  `inspector page in chromium${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let browser: Browser;
    let page: Page;
    let inspector: Inspector;
    let routes: InspectorRoutes;
    let root: Supervisor;
    let server: Server;
    let url: string;

    beforeAll(async () => {
      inspector = createInspector({ flushMs: 50, treeIntervalMs: 50 });
      root = await startSupervisor(
        {
          id: 'root',
          intensity: 10,
          children: [
            { id: 'job-1', start: { logic: job } },
            { id: 'job-2', start: { logic: job } },
            {
              id: 'nested',
              start: { supervisor: { children: [{ id: 'deep', start: { logic: job } }] } },
            },
          ],
        },
        { inspect: inspector.observer },
      );
      routes = inspector.attach({ authenticate: createAuthenticator({ admin: ADMIN, users: {} }) });
      // The test server's API: send an event to a child of root (CRASH makes it throw).
      server = createServer((req, res) => {
        if (routes.handleHttp(req, res)) return;
        const m = /^\/test\/send\/([\w-]+)\/(\w+)$/.exec(req.url ?? '');
        const child = m ? (root.child(m[1]!) as { send(e: unknown): void } | undefined) : undefined;
        if (req.method !== 'POST' || !m || !child) {
          res.writeHead(404).end();
          return;
        }
        child.send({ type: m[2] });
        res.writeHead(204).end();
      });
      server.on('upgrade', (req, socket, head) => {
        if (!routes.handleUpgrade(req, socket, head)) socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    });

    afterAll(async () => {
      await browser?.close();
      routes?.close();
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      await root?.shutdown();
    });

    const post = (path: string) => fetch(`${url}${path}`, { method: 'POST' });

    it('shows the tree, draws the selected statechart, and follows a crash to the restarted actor', async () => {
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${url}/inspect#token=${ADMIN}`);
      await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
      expect(page.url()).toBe(`${url}/inspect`);
      // Nothing selected: the exit controls are not shown.
      expect(await page.locator('#actions').isVisible()).toBe(false);

      const job1 = page.locator('li[data-child="root/job-1"]');
      await job1.and(page.locator('[data-restarts="0"]')).waitFor({ timeout: STEP_MS });
      await page.locator('li[data-child="nested/deep"]').waitFor({ timeout: STEP_MS });
      const firstSession = await job1.getAttribute('data-session');

      // Select job-1: its statechart is drawn with the initial state lit.
      await job1.locator('> .node').click();
      const state = (id: string) => page.locator(`#chart g.state.active[data-state-id="${id}"]`);
      await state('job.idle').waitFor({ timeout: STEP_MS });
      expect(await page.locator('#chart g.state').count()).toBe(3);

      // An event moves it; the highlight follows and the event is listed.
      expect((await post('/test/send/job-1/START')).status).toBe(204);
      await state('job.working').waitFor({ timeout: STEP_MS });
      expect(await state('job.idle').count()).toBe(0);
      await page.locator('#events td', { hasText: 'START' }).first().waitFor({ timeout: STEP_MS });
      await page.locator('#context', { hasText: '"runs": 1' }).waitFor({ timeout: STEP_MS });
      // The invoked ticker shows under its parent.
      await job1.locator('li', { hasText: 'ticker' }).waitFor({ timeout: STEP_MS });

      // Crash it: the restart count rises and the new incarnation is selected, lit anew.
      expect((await post('/test/send/job-1/CRASH')).status).toBe(204);
      await job1.and(page.locator('[data-restarts="1"]')).waitFor({ timeout: STEP_MS });
      const secondSession = await job1.getAttribute('data-session');
      expect(secondSession).not.toBe(firstSession);
      await page.locator('#actor-title', { hasText: secondSession! }).waitFor({ timeout: STEP_MS });
      await state('job.idle').waitFor({ timeout: STEP_MS });
      await page.locator('#context', { hasText: '"runs": 0' }).waitFor({ timeout: STEP_MS });
      await job1.locator('.exit', { hasText: 'error: boom' }).waitFor({ timeout: STEP_MS });
      await page
        .locator('#timeline tr.alarm[data-kind="exit"]', { hasText: 'error: boom' })
        .waitFor({ timeout: STEP_MS });
      await page
        .locator('#timeline tr[data-kind="start"]', { hasText: 'restarted (restart #1)' })
        .waitFor({ timeout: STEP_MS });

      mkdirSync(new URL('.', `file://${ARTIFACT}`).pathname, { recursive: true });
      await page.screenshot({ path: ARTIFACT, fullPage: true });
      expect(errors).toEqual([]);
    });
  },
);
