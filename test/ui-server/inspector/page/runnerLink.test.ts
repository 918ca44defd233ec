/**
 * The board's job link into the inspector (`/inspect#runner=<sessionId>`),
 * in chromium on the fixed inspector scene (lookFixture.ts): the linked
 * TaskRunner is selected, an ended one from inside its fold, the token is
 * the board's when the inspector has none, and the page links back to the
 * job. The parsing and the tree lookup run as doc examples here too.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as runnerLink from '../../../../src/ui-server/inspector/page/runnerLink.js';
import { chromiumSkipReason, launchChromium } from '../../../support/chromium.js';
import { runDocExamples } from '../../../support/docExamples.js';
import { type LookServer, startLookServer } from './lookFixture.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/runnerLink.ts', import.meta.url),
  runnerLink,
);

const skipReason = chromiumSkipReason('inspector runner link browser test');
const STEP_MS = 20_000;

describe.skipIf(skipReason !== null)('inspector page: #runner= from the board', () => {
  let browser: Browser;
  let server: LookServer;
  const contexts: BrowserContext[] = [];

  beforeAll(async () => {
    server = await startLookServer();
    browser = await launchChromium();
  });

  afterAll(async () => {
    for (const c of contexts) await c.close().catch(() => {});
    await browser?.close();
    await server?.close();
  });

  /** A fresh tab; `boardToken`: what the admin board left in this tab's sessionStorage. */
  async function tab(boardToken: string | null): Promise<Page> {
    const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    contexts.push(ctx);
    const page = await ctx.newPage();
    if (boardToken !== null) {
      await page.addInitScript((t) => sessionStorage.setItem('roundtable.token', t), boardToken);
    }
    return page;
  }

  it('selects the linked live runner with the board’s token, and links back to its job', async () => {
    const page = await tab('t');
    await page.goto(`${server.url}/inspect#runner=ses_0002&task=task_0002`);
    await page.locator('body[data-runner-link="selected"]').waitFor({ timeout: STEP_MS });
    expect(
      await page.locator('li[data-child="taskRunners/ses_0002"]').getAttribute('aria-selected'),
    ).toBe('true');
    await page
      .locator('#actor-title', { hasText: 'lint the monorepo (bob)' })
      .waitFor({ timeout: STEP_MS });
    await page.locator('body[data-chart="drawn"]').waitFor({ timeout: STEP_MS });
    const back = page.locator('#job-link');
    expect(await back.getAttribute('href')).toBe('/#/jobs/task_0002');
    expect(await back.isVisible()).toBe(true);
    // The link stays in the address bar (a reload follows it again).
    expect(new URL(page.url()).hash).toBe('#runner=ses_0002&task=task_0002');
  });

  it('opens the fold of an ended runner to select it; the token leaves the URL, the link stays', async () => {
    const page = await tab(null);
    await page.goto(`${server.url}/inspect#token=t&runner=ses_0001`);
    await page.locator('body[data-runner-link="selected"]').waitFor({ timeout: STEP_MS });
    const row = page.locator('li[data-child="taskRunners/ses_0001"]');
    expect(await row.getAttribute('aria-selected')).toBe('true');
    expect(await row.isVisible()).toBe(true);
    expect(await page.locator('li[data-ended]').getAttribute('aria-expanded')).toBe('true');
    expect(new URL(page.url()).hash).toBe('#runner=ses_0001');
    expect(await page.locator('#job-link').getAttribute('href')).toBe('/#/jobs/task_0001');
    // Another link in the same tab moves the selection.
    await page.evaluate(() => {
      location.hash = '#runner=ses_0003';
    });
    await page
      .locator('li[data-child="taskRunners/ses_0003"][aria-selected="true"]')
      .waitFor({ timeout: STEP_MS });
  });

  it('says so when the runner is not in this node’s tree', async () => {
    const page = await tab('t');
    await page.goto(`${server.url}/inspect#runner=ses_9999&task=task_9999`);
    await page.locator('body[data-runner-link="absent"]').waitFor({ timeout: STEP_MS });
    expect(await page.locator('#actor-title').textContent()).toMatch(
      /^runner ses_9999 is not in this node's tree/,
    );
    expect(await page.locator('#tree li[aria-selected="true"]').count()).toBe(0);
  });
});
