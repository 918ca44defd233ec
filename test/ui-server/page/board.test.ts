/**
 * The board page in a real browser: Debian's chromium driven by
 * playwright-core (never a downloaded browser). Skipped, with the reason
 * printed, when chromium is missing outside CI; in CI a missing chromium fails.
 */
import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipReason, launchChromium } from '../../support/chromium.js';
import { FakeBoard } from '../../support/fakeBoard.js';
import { ALICE, type Harness, spec, startHarness } from '../wsHarness.js';

const skipReason = chromiumSkipReason('board page browser test');

const STEP_MS = 5000;

describe.skipIf(skipReason !== null)(
  `board page in chromium${skipReason === null ? '' : ` (skipped: ${skipReason})`}`,
  () => {
    let browser: Browser;
    let h: Harness;
    let page: Page;
    const card = (column: string, taskId: string) =>
      page.locator(`section[data-column="${column}"] article[data-task-id="${taskId}"]`);

    beforeAll(async () => {
      // Real timestamps, so the page's waiting and running times read sensibly.
      h = await startHarness({}, new FakeBoard({ maxRunning: 2, now: () => Date.now() }));
      browser = await launchChromium();
      page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    });

    afterAll(async () => {
      await browser?.close();
      await h?.server.close();
    });

    it('shows waiting with a position beyond the caps, turns running when a slot frees, and finishes', async () => {
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await h.board.setUserCap('alice', 1);
      for (const title of ['build api', 'run agent', 'lint']) {
        await h.board.createTask('alice', spec(title));
      }
      await h.board.createTask('bob', spec('not alice’s'));

      await page.goto(`${h.server.url}/#token=${ALICE}`);
      await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
      // The fragment is dropped from the address bar once the token is read.
      expect(page.url()).toBe(`${h.server.url}/`);

      // Alice's cap is 1: t1 holds a runner, t2 and t3 wait in line.
      await card('running', 't1').waitFor({ timeout: STEP_MS });
      await card('queued', 't2')
        .filter({ hasText: 'waiting · position 1' })
        .waitFor({ timeout: STEP_MS });
      await card('queued', 't3')
        .filter({ hasText: 'waiting · position 2' })
        .waitFor({ timeout: STEP_MS });
      expect(await page.locator('[data-task-id="t4"]').count()).toBe(0);

      h.board.output('t1', 'npm run build');
      h.board.output('t1', 'built in 2.1s');
      await card('running', 't1')
        .locator('pre', { hasText: 'built in 2.1s' })
        .waitFor({ timeout: STEP_MS });

      // A slot frees: t2 turns running, t3 moves up.
      h.board.finish('t1', 0);
      await card('done', 't1')
        .filter({ hasText: 'succeeded · exit 0' })
        .waitFor({ timeout: STEP_MS });
      await card('running', 't2').waitFor({ timeout: STEP_MS });
      await card('queued', 't3')
        .filter({ hasText: 'waiting · position 1' })
        .waitFor({ timeout: STEP_MS });

      // A failure says why and offers retry; retry puts it back in line.
      h.board.output('t2', 'Error: agent crashed');
      h.board.finish('t2', 137);
      const failed = card('failed', 't2');
      await failed
        .filter({ hasText: 'failed: exit_code · exit 137 (recoverable)' })
        .waitFor({ timeout: STEP_MS });
      await card('running', 't3').waitFor({ timeout: STEP_MS });
      mkdirSync(new URL('../../artifacts/', import.meta.url), { recursive: true });
      h.board.output('t3', 'eslint .');
      await h.board.createTask('alice', spec('deploy docs'));
      await card('queued', 't5')
        .filter({ hasText: 'waiting · position 1' })
        .waitFor({ timeout: STEP_MS });
      await page.screenshot({
        path: new URL('../../artifacts/board.png', import.meta.url).pathname,
        fullPage: true,
      });
      await failed.locator('button.retry').click();
      await card('queued', 't2')
        .filter({ hasText: 'waiting · position 2' })
        .filter({ hasText: 'attempt 2' })
        .waitFor({ timeout: STEP_MS });

      // Everything finishes, in line order.
      h.board.finish('t3', 0);
      await card('running', 't5').waitFor({ timeout: STEP_MS });
      await card('queued', 't2')
        .filter({ hasText: 'waiting · position 1' })
        .waitFor({ timeout: STEP_MS });
      h.board.finish('t5', 0);
      await card('running', 't2').waitFor({ timeout: STEP_MS });
      h.board.finish('t2', 0);
      await card('done', 't2').waitFor({ timeout: STEP_MS });
      await card('done', 't3').waitFor({ timeout: STEP_MS });
      await card('done', 't5').waitFor({ timeout: STEP_MS });

      // A cancelled task says so, apart from the failures.
      const { taskId: abandoned } = await h.board.createTask('alice', spec('abandoned'));
      await h.board.cancel('alice', abandoned);
      await card('failed', abandoned)
        .filter({ hasText: 'cancelled' })
        .waitFor({ timeout: STEP_MS });
      expect(await card('failed', abandoned).locator('.why').count()).toBe(0);
      expect(await page.locator('section[data-column="queued"] article').count()).toBe(0);
      expect(await page.locator('section[data-column="running"] article').count()).toBe(0);
      expect(h.board.calls.filter((c) => c.op === 'retry')).toEqual([
        { op: 'retry', actor: 'alice', args: ['t2'] },
      ]);
      expect(errors).toEqual([]);
    });
  },
);
