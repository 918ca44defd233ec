/**
 * The inspector page's looks and use, in chromium, on a fixed scene
 * (lookFixture.ts): screenshots at three widths (and dark at one) compared
 * with the committed baselines, axe-core with no serious or critical
 * violation in light and dark, labels of the TaskRunner's chart measured
 * apart, the keyboard, the timeline filters, the runner names, the job link.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipReason, launchChromium } from '../../../support/chromium.js';
import {
  ARTIFACTS,
  expectLooksAsBefore,
  LookContexts,
  lookShots,
  type Scheme,
} from '../../../support/pageLooks.js';
import { type LookServer, startLookServer } from './lookFixture.js';

const skipReason = chromiumSkipReason('inspector look browser test');
const STEP_MS = 20_000;
const BASELINES = new URL('./screenshots/', import.meta.url).pathname;

describe.skipIf(skipReason !== null)('inspector page: looks, keyboard, accessibility', () => {
  let browser: Browser;
  let server: LookServer;
  let contexts: LookContexts;

  beforeAll(async () => {
    server = await startLookServer();
    browser = await launchChromium();
    contexts = new LookContexts(browser);
  });

  afterAll(async () => {
    await contexts?.close();
    await browser?.close();
    await server?.close();
  });

  /** A page at `width`, connected, with the TaskRunner of "lint the monorepo" selected and drawn. */
  async function open(width: number, height: number, scheme: Scheme = 'light'): Promise<Page> {
    const { page, errors } = await contexts.page(width, height, scheme);
    await page.goto(`${server.url}/inspect#token=t`);
    await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
    await page.locator('li[data-child="taskRunners/ses_0002"]').waitFor({ timeout: STEP_MS });
    // Nothing selected: no exit button (the CSS once showed it through `hidden`).
    expect(await page.locator('#actions').isVisible()).toBe(false);
    await page.locator('li[data-child="taskRunners/ses_0002"] > .node').click();
    await page.locator('body[data-chart="drawn"]').waitFor({ timeout: STEP_MS });
    expect(errors).toEqual([]);
    return page;
  }

  for (const shot of lookShots('inspector')) {
    it(`looks as it did at ${shot.width} px (${shot.scheme})`, async () => {
      const page = await open(shot.width, shot.height, shot.scheme);
      await expectLooksAsBefore(browser, page, shot, BASELINES);
    });
  }

  it('records its first paint and bundle size (test/artifacts/inspector-paint.json; reported, not asserted)', async () => {
    const page = await open(1400, 900);
    const paint = await page.evaluate(() => {
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null;
      const js = performance
        .getEntriesByType('resource')
        .find((r) => r.name.endsWith('/inspect.js')) as PerformanceResourceTiming | undefined;
      return {
        firstContentfulPaintMs: fcp,
        scriptMs: js ? js.responseEnd - js.startTime : null,
        scriptBytes: js?.transferSize ?? null,
      };
    });
    mkdirSync(ARTIFACTS, { recursive: true });
    writeFileSync(`${ARTIFACTS}inspector-paint.json`, `${JSON.stringify(paint, null, 2)}\n`);
    expect(paint.firstContentfulPaintMs).not.toBeNull();
  });

  it("the TaskRunner's chart: every label apart from every other, on its own backing", async () => {
    const page = await open(1400, 900);
    const rects = await page.$$eval('#chart g.edge-label', (gs) =>
      gs.map((g) => {
        const r = g.querySelector('rect')!.getBoundingClientRect();
        const t = g.querySelector('text')!.getBoundingClientRect();
        return {
          id: g.getAttribute('data-edge'),
          r: { x: r.x, y: r.y, w: r.width, h: r.height },
          t: { x: t.x, y: t.y, w: t.width, h: t.height },
        };
      }),
    );
    expect(rects.length).toBe(20);
    const hit = (a: { x: number; y: number; w: number; h: number }, b: typeof a) =>
      a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
    for (let i = 0; i < rects.length; i++) {
      const { r, t } = rects[i]!;
      // The text as the browser drew it fits its backing (the measure was right).
      expect(t.x).toBeGreaterThanOrEqual(r.x - 0.5);
      expect(t.x + t.w).toBeLessThanOrEqual(r.x + r.w + 0.5);
      for (let j = i + 1; j < rects.length; j++)
        expect(hit(r, rects[j]!.r), `${rects[i]!.id} x ${rects[j]!.id}`).toBe(false);
    }
    const states = await page.$$eval('#chart g.state.leaf rect', (rs) =>
      rs
        .map((r) => r.getBoundingClientRect())
        .map((b) => ({ x: b.x, y: b.y, w: b.width, h: b.height })),
    );
    for (const { r, id } of rects)
      for (const s of states) expect(hit(r, s), `${id} on a state`).toBe(false);
    // Readable: drawn at no less than 3/4 of its natural size.
    const scale = await page.$eval(
      '#chart svg',
      (svg) => svg.getBoundingClientRect().width / Number(svg.getAttribute('width')),
    );
    expect(scale).toBeGreaterThanOrEqual(0.75);
  });

  it('names runners by job and user, live first, ended folded; links a runner to its job', async () => {
    const page = await open(1400, 900);
    const rows = await page.$$eval('li[data-supervisor="taskRunners"] > ul > li', (lis) =>
      lis.map((li) => li.querySelector(':scope > .node')!.textContent),
    );
    expect(rows[0]).toContain('lint the monorepo');
    expect(rows[0]).toContain('bob');
    expect(rows[1]).toContain('integration tests (postgres 16)');
    expect(rows[2]).toContain('1 ended');
    expect(await page.locator('li[data-child="taskRunners/ses_0001"]').count()).toBe(0);
    await page.locator('li[data-ended] > .node').click();
    await page
      .locator('li[data-child="taskRunners/ses_0001"]', { hasText: 'nightly build' })
      .waitFor({ timeout: STEP_MS });
    expect(await page.locator('#job-link').getAttribute('href')).toBe('/#/jobs/task_0002');
    await page
      .locator('#actor-title', { hasText: 'lint the monorepo (bob)' })
      .waitFor({ timeout: STEP_MS });
    expect(await page.locator('#actions').isVisible()).toBe(true);
  });

  it('is used from the keyboard: arrows move, Enter selects, → opens the fold', async () => {
    const page = await open(1400, 900);
    const focused = () =>
      page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.key ?? null);
    // The tab order reaches the tree at its selected row.
    await page.locator('li[aria-selected="true"]').focus();
    expect(await focused()).toBe('child:x:3/ses_0002');
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('invoked:x:13'); // what the runner invoked, under it
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('child:x:3/ses_0003');
    await page.keyboard.press('Enter');
    await page
      .locator('#actor-title', { hasText: 'integration tests' })
      .waitFor({ timeout: STEP_MS });
    // Focus survives the redraw the selection caused.
    expect(await focused()).toBe('child:x:3/ses_0003');
    await page.keyboard.press('ArrowDown');
    expect(await focused()).toBe('ended:x:3');
    await page.keyboard.press('ArrowRight');
    await page.locator('li[data-child="taskRunners/ses_0001"]').waitFor({ timeout: STEP_MS });
    await page.keyboard.press('ArrowRight');
    expect(await focused()).toBe('child:x:3/ses_0001');
    await page.keyboard.press('Home');
    expect(await focused()).toBe('sup:root');
    await page.keyboard.press('End');
    expect(await focused()).toBe('child:x:1/heartbeat');
    await page.keyboard.press('ArrowLeft');
    expect(await focused()).toBe('sup:root');
  });

  it('filters the timeline by actor (id, job or user) and by kind', async () => {
    const page = await open(1400, 900);
    const rows = () => page.locator('#timeline tr').count();
    expect(await rows()).toBe(8);
    await page.locator('#tl-actor').fill('runnerPool');
    expect(await rows()).toBe(3);
    await page.locator('#tl-actor').fill('alice');
    expect(await rows()).toBe(4);
    await page.locator('#tl-kind').selectOption('exit');
    expect(await rows()).toBe(2);
    await page.locator('#tl-actor').fill('');
    expect(await rows()).toBe(3);
    await page.locator('#tl-alarms').check();
    expect(await rows()).toBe(2);
    expect(await page.locator('#tl-count').textContent()).toBe('2 of 8');
  });
});
