/**
 * The admin view in Debian's chromium (playwright-core), over the fake
 * board: the dashboard's uPlot charts draw the series the server answers
 * (the series' SQL is tested on both engines in test/db/activitySeries),
 * the nodes list follows the cluster as it changes, and a user's page has
 * neither.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterNodeView } from '../../../src/board/boardPort.js';
import { axeViolations } from '../../support/axe.js';
import { chromiumSkipReason, launchChromium } from '../../support/chromium.js';
import { FakeBoard } from '../../support/fakeBoard.js';
import { ADMIN, ALICE, type Harness, startHarness } from '../wsHarness.js';

const skipReason = chromiumSkipReason('admin view browser test');
const STEP_MS = 8000;

const START = Math.floor(Date.now() / 60_000) * 60 - 59 * 60;
const minutes = Array.from({ length: 60 }, (_, i) => i);
const SERIES = {
  bucketSeconds: 60,
  t: minutes.map((i) => START + i * 60),
  queued: minutes.map((i) => (i < 30 ? i % 10 : 4)),
  running: minutes.map(() => 2),
  waitP50: minutes.map((i) => (i % 7 === 0 ? null : 1.5)),
  waitP95: minutes.map((i) => (i % 7 === 0 ? null : 12)),
  succeeded: minutes.map((i) => i % 3),
  failed: minutes.map((i) => (i === 40 ? 5 : 0)),
};

const now = Date.now();
const iso = (msAgo: number) => new Date(now - msAgo).toISOString();
const NODE_A: ClusterNodeView = {
  owner: 'node-a@b1',
  nodeId: 'node-a',
  bootId: 'b1',
  since: iso(3_600_000),
  lastBeat: iso(2_000),
  lock: 'held',
  liveness: 'alive',
  deadAfterMs: 60_000,
  self: true,
  sessionsOwned: 3,
};
const NODE_B: ClusterNodeView = {
  ...NODE_A,
  owner: 'node-b@b7',
  nodeId: 'node-b',
  bootId: 'b7',
  self: false,
  deadAfterMs: 10_000,
  sessionsOwned: 5,
};

describe.skipIf(skipReason !== null)('admin view in chromium', () => {
  let browser: Browser;
  let h: Harness;
  let page: Page;

  beforeAll(async () => {
    h = await startHarness({}, new FakeBoard({ maxRunning: 2, now: () => Date.now() }));
    h.board.activitySeries = SERIES;
    h.board.nodes = [NODE_A, NODE_B];
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${h.server.url}/#token=${ADMIN}`);
    await page.locator('body[data-view="admin"]').waitFor({ timeout: STEP_MS });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.server.close();
  });

  it('draws the last hour in four uPlot charts, with each series summed up in words', async () => {
    const chart = (name: string) => page.locator(`figure[data-chart="${name}"]`);
    await chart('ended').locator('canvas').waitFor({ timeout: STEP_MS });
    for (const name of ['queued', 'running', 'wait', 'ended']) {
      expect(await chart(name).getAttribute('data-points')).toBe('60');
      // Something was drawn: the canvas holds lines in the series' colours, not only the axes.
      const coloured = await chart(name)
        .locator('canvas')
        .evaluate((c: HTMLCanvasElement) => {
          const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
          let n = 0;
          for (let i = 0; i < px.length; i += 4) {
            const [r, g, b, a] = [px[i]!, px[i + 1]!, px[i + 2]!, px[i + 3]!];
            if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n += 1;
          }
          return n;
        });
      expect(coloured, name).toBeGreaterThan(50);
    }
    expect(await chart('queued').locator('.chart-summary').textContent()).toBe(
      'queued now 4, peak 9',
    );
    expect(await chart('wait').locator('.chart-summary').textContent()).toBe(
      'p50 now 1.5 s, peak 1.5 s · p95 now 12 s, peak 12 s',
    );
    expect(await chart('ended').locator('.chart-summary').textContent()).toBe(
      'succeeded now 2, peak 2 · failed now 0, peak 5',
    );
    expect(h.board.activityQueries[0]).toEqual({ minutes: 60 });
  });

  it('lists the nodes and follows them live', async () => {
    const row = (owner: string) => page.locator(`.nodes tr[data-owner="${owner}"]`);
    await row('node-b@b7').waitFor({ timeout: STEP_MS });
    const cells = await row('node-a@b1').locator('td').allTextContents();
    expect(cells[0]).toBe('node-a (this node)');
    expect(cells.slice(1, 2)).toEqual(['b1']);
    // Up an hour when the file started; minutes more on a loaded machine.
    expect(cells[2]).toMatch(/^1h \dm$/);
    expect(cells[3]).toMatch(/^\d+s ago$/);
    expect(cells.slice(4)).toEqual(['1m 0s', '3', 'held', 'alive']);
    // node-b dies: its lock is released, the verdict turns, and a new node joins.
    h.board.nodes = [
      NODE_A,
      // From now, not from the file's start: chromium's launch and the first
      // test may take tens of seconds on a loaded machine.
      {
        ...NODE_B,
        lock: 'released',
        liveness: 'dead',
        lastBeat: new Date(Date.now() - 90_000).toISOString(),
      },
      { ...NODE_B, owner: 'node-c@b1', nodeId: 'node-c', bootId: 'b1', sessionsOwned: 0 },
    ];
    await page
      .locator('.nodes tr[data-owner="node-b@b7"][data-liveness="dead"]')
      .waitFor({ timeout: STEP_MS });
    expect(await row('node-b@b7').locator('td').allTextContents()).toEqual([
      'node-b',
      'b7',
      expect.stringMatching(/^1h \dm$/),
      // 90 s, give or take: the page's clock ticks once a second (a second
      // behind at most), and a loaded machine may take seconds to show it.
      expect.stringMatching(/^1m [2-5]\ds ago$/),
      '10s',
      '5',
      'released',
      'dead',
    ]);
    await row('node-c@b1').waitFor({ timeout: STEP_MS });
    expect(await page.locator('#nodes-title .count').textContent()).toBe('3');
  });

  it('has no serious accessibility violation, in light and dark', async () => {
    expect(await axeViolations(page)).toEqual([]);
    const dark = await browser.newPage({
      viewport: { width: 420, height: 900 },
      colorScheme: 'dark',
    });
    try {
      await dark.goto(`${h.server.url}/#token=${ADMIN}`);
      await dark.locator('.nodes tr[data-owner]').first().waitFor({ timeout: STEP_MS });
      await dark.locator('figure[data-chart="ended"] canvas').waitFor({ timeout: STEP_MS });
      expect(await axeViolations(dark)).toEqual([]);
      // A phone's width: the charts and the table stay inside it.
      expect(await dark.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBe(0);
    } finally {
      await dark.close();
    }
  });

  it('shows a user neither the charts nor the nodes', async () => {
    const user = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await user.goto(`${h.server.url}/#token=${ALICE}`);
      await user.locator('body[data-view="user"][data-connection="live"]').waitFor({
        timeout: STEP_MS,
      });
      await user.locator('#create').waitFor({ timeout: STEP_MS });
      expect(await user.locator('.admin-view, figure[data-chart], .nodes').count()).toBe(0);
      const asked = await user.evaluate(async () => {
        const token = sessionStorage.getItem('roundtable.token');
        const get = (path: string) =>
          fetch(path, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
        return [await get('/api/admin/activity'), await get('/api/admin/nodes')];
      });
      expect(asked).toEqual([403, 403]);
    } finally {
      await user.close();
    }
  });
});
