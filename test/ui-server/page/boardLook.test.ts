/**
 * The board page's looks, in chromium, on a fixed scene (the fake board on
 * a stopped clock, the page's clock fixed too): screenshots at three widths
 * and dark compared with the committed baselines, axe-core with no serious
 * or critical violation (the set-up the inspector's looks use,
 * test/support/pageLooks.ts); then a 1,000-card board and a 100,000-card
 * line each painted with one page per column (how fast is the board
 * bench's), and paging through the long line with its positions exact.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipReason, launchChromium } from '../../support/chromium.js';
import { FakeBoard } from '../../support/fakeBoard.js';
import {
  expectLooksAsBefore,
  LookContexts,
  lookShots,
  type Scheme,
} from '../../support/pageLooks.js';
import { ALICE, type Harness, spec, startHarness } from '../wsHarness.js';
import { measureFirstPaint } from './firstPaint.js';

const skipReason = chromiumSkipReason('board look browser test');
const STEP_MS = 20_000;
const BASELINES = new URL('./screenshots/', import.meta.url).pathname;
const T0 = Date.parse('2026-11-01T10:00:00Z');

/** Every column in use, with output, a retry's reason, a failure and a cancel. */
async function scene(board: FakeBoard): Promise<void> {
  await board.setUserCap('alice', 2);
  await board.createTask('alice', spec('build the api')); // t1: runs, succeeds
  board.output('t1', 'npm run build');
  board.finish('t1', 0);
  await board.createTask('alice', spec('integration tests (postgres 16)')); // t2: fails
  board.output('t2', 'Error: connection refused');
  board.finish('t2', 1);
  await board.createTask('alice', spec('lint the monorepo')); // t3: running
  for (const line of ['eslint .', 'checked 812 files', 'no problems found in packages/core'])
    board.output('t3', line);
  await board.createTask('alice', spec('render the docs site')); // t4: running
  for (const title of ['nightly build', 'deploy preview', 'abandoned', 'benchmarks'])
    await board.createTask('alice', spec(title)); // t5..t8: queued
  await board.cancel('alice', 't7');
  await board.retry('alice', 't2'); // t2 again, attempt 2, at the back of the line
  await board.createTask('bob', spec('not alice’s'));
}

describe.skipIf(skipReason !== null)('board page: looks, accessibility, first paint', () => {
  let browser: Browser;
  let h: Harness;
  let contexts: LookContexts;

  beforeAll(async () => {
    h = await startHarness({}, new FakeBoard({ maxRunning: 3, now: () => T0 }));
    await scene(h.board);
    browser = await launchChromium();
    contexts = new LookContexts(browser);
  });

  afterAll(async () => {
    await contexts?.close();
    await browser?.close();
    await h?.server.close();
  });

  async function open(width: number, height: number, scheme: Scheme): Promise<Page> {
    const { page, errors } = await contexts.page(width, height, scheme);
    // The cards' times read from the page's clock: stop it 65 s after the scene.
    await page.clock.setFixedTime(T0 + 65_000);
    await page.goto(`${h.server.url}/#token=${ALICE}`);
    await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
    await page
      .locator('section[data-column="queued"] article .eta')
      .first()
      .waitFor({ timeout: STEP_MS });
    expect(errors).toEqual([]);
    return page;
  }

  for (const shot of lookShots('board')) {
    it(`looks as it did at ${shot.width} px (${shot.scheme})`, async () => {
      const page = await open(shot.width, shot.height, shot.scheme);
      await expectLooksAsBefore(browser, page, shot, BASELINES);
    });
  }
});

describe.skipIf(skipReason !== null)('board page: a long line', () => {
  let browser: Browser;
  let contexts: LookContexts;
  const servers: Harness[] = [];

  beforeAll(async () => {
    browser = await launchChromium();
    contexts = new LookContexts(browser);
  });
  afterAll(async () => {
    await contexts?.close();
    await browser?.close();
    for (const h of servers) await h.server.close();
  });

  async function lineOf(cards: number): Promise<Harness> {
    const h = await startHarness({}, new FakeBoard({ maxRunning: 2, now: () => T0 }));
    servers.push(h);
    h.board.createMany(
      'alice',
      Array.from({ length: cards }, (_, i) => spec(`queued job ${i + 1}`)),
    );
    return h;
  }

  // How fast it paints is measured by `npm run bench -- board` (its "First
  // paint in chromium"), never asserted here: a test's timing follows the
  // machine's load, not the page.
  it('paints a 1,000-card board and a 100,000-card line with one page per column', async () => {
    for (const cards of [1_000, 100_000]) {
      const h = await lineOf(cards);
      const { page } = await contexts.page(1400, 900, 'light');
      const painted = await measureFirstPaint(page, `${h.server.url}/#token=${ALICE}`, STEP_MS);
      await page.close();
      // The page holds a page per column, whatever the line's length.
      expect(painted.articles).toBe(102);
      expect(painted.queuedCount).toBe(String(cards - 2));
    }
  });

  it('pages through a 100,000-card line with exact positions', async () => {
    const h = await lineOf(100_000);
    const { page, errors } = await contexts.page(1400, 900, 'light');
    await page.goto(`${h.server.url}/#token=${ALICE}`);
    const queued = page.locator('section[data-column="queued"]');
    await queued.locator('.range', { hasText: '1–100 of 99998' }).waitFor({ timeout: STEP_MS });
    for (let p = 1; p <= 3; p++) {
      await queued.locator('button.later').click();
      await queued
        .locator('article .meta', { hasText: `position ${p * 100 + 1} ` })
        .waitFor({ timeout: STEP_MS });
    }
    const positionsOf = () =>
      queued
        .locator('.meta.waiting')
        .evaluateAll((els) => els.map((e) => Number(/position (\d+)/.exec(e.textContent!)![1])));
    expect(await positionsOf()).toEqual(Array.from({ length: 100 }, (_, i) => 301 + i));
    // A run ends and the head of the line starts: the page's window slides by one.
    const ids = () =>
      queued.locator('article').evaluateAll((els) => els.map((e) => e.dataset.taskId));
    const before = await ids();
    h.board.finish('t1', 0);
    await queued
      .locator(`article[data-task-id="${before[1]}"] .meta`, { hasText: 'position 301 ' })
      .waitFor({ timeout: STEP_MS });
    expect(await ids()).toEqual([...before.slice(1), expect.any(String)]);
    expect(await positionsOf()).toEqual(Array.from({ length: 100 }, (_, i) => 301 + i));
    expect(await page.locator('article').count()).toBeLessThanOrEqual(110);
    expect(errors).toEqual([]);
  });
});
