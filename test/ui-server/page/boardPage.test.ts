/**
 * The board page's behaviour in Debian's chromium (playwright-core, never a
 * downloaded browser), over the fake board: keyed updates that leave a card
 * being read alone, errors that stay, the shell-split create form, cancel,
 * the admin's view, filters, counts, paging, estimates and the keyboard.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipReason, launchChromium } from '../../support/chromium.js';
import { FakeBoard } from '../../support/fakeBoard.js';
import { ADMIN, ALICE, BOB, type Harness, spec, startHarness } from '../wsHarness.js';

const skipReason = chromiumSkipReason('board page behaviour test');
const STEP_MS = 5000;

describe.skipIf(skipReason !== null)('board page behaviour in chromium', () => {
  let browser: Browser;
  let h: Harness;
  let page: Page;
  const card = (column: string, taskId: string) =>
    page.locator(`section[data-column="${column}"] article[data-task-id="${taskId}"]`);

  beforeAll(async () => {
    h = await startHarness({}, new FakeBoard({ maxRunning: 2, now: () => Date.now() }));
    await h.board.setUserCap('alice', 1);
    // t1 runs and finishes before the page loads, so the first poll has a duration to estimate with.
    await h.board.createTask('alice', spec('warm-up'));
    h.board.finish('t1', 0);
    await h.board.createTask('alice', spec('long run')); // t2: running
    await h.board.createTask('alice', spec('next up')); // t3: queued
    await h.board.createTask('bob', spec('bob build')); // t4: running (bob)
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${h.server.url}/#token=${ALICE}`);
    await page.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
  });

  afterAll(async () => {
    await browser?.close();
    await h?.server.close();
  });

  it('patches a card in place and leaves a selection in its output alone', async () => {
    h.board.output('t2', 'line 1');
    const pre = card('running', 't2').locator('pre');
    await pre.filter({ hasText: 'line 1' }).waitFor({ timeout: STEP_MS });
    await page.evaluate(() => {
      const w = window as unknown as { kept: Element | null };
      w.kept = document.querySelector('[data-task-id="t2"]');
      const pre = document.querySelector('[data-task-id="t2"] pre')!;
      const range = document.createRange();
      range.selectNodeContents(pre);
      document.getSelection()!.removeAllRanges();
      document.getSelection()!.addRange(range);
    });
    h.board.output('t2', 'line 2');
    // Another card's patch arrives after it: once it is drawn, t2's would have been too.
    h.board.output('t4', 'bob was here');
    await page.waitForTimeout(300);
    const held = await page.evaluate(() => ({
      same:
        (window as unknown as { kept: Element }).kept ===
        document.querySelector('[data-task-id="t2"]'),
      selected: document.getSelection()!.toString(),
    }));
    expect(held).toEqual({ same: true, selected: 'line 1' });
    await page.evaluate(() => document.getSelection()!.removeAllRanges());
    await pre.filter({ hasText: 'line 2' }).waitFor({ timeout: STEP_MS });
    expect(
      await page.evaluate(() => (window as unknown as { kept: Element }).kept.isConnected),
    ).toBe(true);
  });

  it('follows the output tail unless scrolled up', async () => {
    for (let i = 3; i <= 20; i += 1) h.board.output('t2', `line ${i}`);
    const pre = card('running', 't2').locator('pre');
    await pre.filter({ hasText: 'line 20' }).waitFor({ timeout: STEP_MS });
    const gap = () => pre.evaluate((el) => el.scrollHeight - el.clientHeight - el.scrollTop);
    expect(await gap()).toBeLessThanOrEqual(4);
    await pre.evaluate((el) => {
      el.scrollTop = 0;
    });
    h.board.output('t2', 'line 21');
    await pre.filter({ hasText: 'line 21' }).waitFor({ timeout: STEP_MS });
    expect(await pre.evaluate((el) => el.scrollTop)).toBe(0);
  });

  it('keeps an error until it is dismissed', async () => {
    await page.fill('input[name="title"]', 'bad image');
    await page.fill('input[name="image"]', 'invalid');
    await page.click('#create button[type="submit"]');
    const error = page.locator('.errors li', { hasText: 'image refused' });
    await error.waitFor({ timeout: STEP_MS });
    await page.waitForTimeout(1500);
    expect(await error.count()).toBe(1);
    await error.locator('button').click();
    expect(await page.locator('.errors li').count()).toBe(0);
    await page.fill('input[name="image"]', 'alpine:3');
  });

  it('splits the command line as a shell would and shows the argv', async () => {
    await page.fill('input[name="title"]', 'shouty');
    await page.fill('input[name="command"]', `sh -c 'echo "hello world" | tr a-z A-Z'`);
    await page
      .locator('#argv', { hasText: 'argv: ["sh","-c","echo \\"hello world\\" | tr a-z A-Z"]' })
      .waitFor({ timeout: STEP_MS });
    await page.click('#create button[type="submit"]');
    await page.locator('article', { hasText: 'shouty' }).waitFor({ timeout: STEP_MS });
    const created = h.board.calls.filter((c) => c.op === 'createTask').at(-1)!;
    expect(created.args[0]).toMatchObject({
      title: 'shouty',
      command: ['sh', '-c', 'echo "hello world" | tr a-z A-Z'],
    });
    await page.fill('input[name="command"]', 'echo a | wc -c');
    await page.locator('#argv.bad', { hasText: 'needs a shell' }).waitFor({ timeout: STEP_MS });
    expect(await page.locator('#create button[type="submit"]').isDisabled()).toBe(true);
  });

  it('sends one draft with one key: a double click makes one task', async () => {
    await page.fill('input[name="command"]', 'echo twice');
    await page.fill('input[name="title"]', 'twice');
    await page.dblclick('#create button[type="submit"]');
    await page.locator('article', { hasText: 'twice' }).waitFor({ timeout: STEP_MS });
    const sent = h.board.calls
      .filter((c) => c.op === 'createTask')
      .map((c) => c.args[0] as { title: string; key?: string })
      .filter((input) => input.title === 'twice');
    expect(sent.length).toBeGreaterThanOrEqual(1);
    expect(new Set(sent.map((input) => input.key)).size).toBe(1);
    expect(sent[0]?.key).toMatch(/^form-[0-9a-f]{32}$/);
    expect(await page.locator('article', { hasText: 'twice' }).count()).toBe(1);
    // The next draft has a key of its own.
    await page.fill('input[name="title"]', 'twice');
    await page.click('#create button[type="submit"]');
    await page.locator('article', { hasText: 'twice' }).nth(1).waitFor({ timeout: STEP_MS });
    expect(sent[0]).not.toHaveProperty('timeLimitMs');
  });

  it('sends the time limit chosen in the form', async () => {
    await page.fill('input[name="title"]', 'bounded');
    await page.selectOption('#create select[name="time limit"]', { label: 'limit 30m' });
    await page.click('#create button[type="submit"]');
    await page.locator('article', { hasText: 'bounded' }).waitFor({ timeout: STEP_MS });
    const sent = h.board.calls
      .filter((c) => c.op === 'createTask')
      .map((c) => c.args[0] as { title: string; timeLimitMs?: number })
      .find((input) => input.title === 'bounded');
    expect(sent?.timeLimitMs).toBe(1_800_000);
  });

  it('estimates when queued cards start and cancels from the card', async () => {
    await card('queued', 't3').locator('.eta', { hasText: 'starts' }).waitFor({ timeout: STEP_MS });
    await card('queued', 't3').locator('button.cancel').click();
    await card('failed', 't3').filter({ hasText: 'cancelled' }).waitFor({ timeout: STEP_MS });
    expect(h.board.calls.filter((c) => c.op === 'cancel').at(-1)).toEqual({
      op: 'cancel',
      actor: 'alice',
      args: ['t3'],
    });
  });

  it('counts, filters and pages a long line, holding only the page it shows', async () => {
    for (let i = 0; i < 250; i += 1) await h.board.createTask('alice', spec(`bulk ${i}`));
    const queued = page.locator('section[data-column="queued"]');
    await queued.locator('h2 .count', { hasText: /^25[0-9]$/ }).waitFor({ timeout: STEP_MS });
    expect(await queued.locator('article').count()).toBe(100);
    const positions = () =>
      queued
        .locator('.meta.waiting')
        .evaluateAll((els) => els.map((e) => Number(/position (\d+)/.exec(e.textContent!)![1])));
    expect((await positions()).slice(0, 2)).toEqual([1, 2]);
    await queued.locator('button.later').click();
    await queued.locator('.range', { hasText: /^101–200 of 25\d$/ }).waitFor({ timeout: STEP_MS });
    await queued
      .locator('article .meta', { hasText: 'position 101 ' })
      .waitFor({ timeout: STEP_MS });
    expect(await queued.locator('article').count()).toBe(100);
    expect(await positions()).toEqual(Array.from({ length: 100 }, (_, i) => 101 + i));
    // The page holds the cards it shows, not the line.
    const held = await page.evaluate(() => document.querySelectorAll('article').length);
    expect(held).toBeLessThanOrEqual(110);
    await queued.locator('button.earlier').click();
    await queued.locator('.range', { hasText: /^1–100 of/ }).waitFor({ timeout: STEP_MS });
    await page.fill('input[type="search"]', 'bulk 24');
    await queued.locator('h2 .count', { hasText: /^11$/ }).waitFor({ timeout: STEP_MS });
    expect(await queued.locator('article').count()).toBe(11);
    await page.fill('input[type="search"]', '');
    await page.selectOption('select[name="status"]', 'succeeded');
    await page.locator('section[data-column="queued"] h2 .count', { hasText: /^0$/ }).waitFor();
    expect(await page.locator('section[data-column="done"] article').count()).toBe(1);
    await page.selectOption('select[name="status"]', '');
  });

  it('moves between cards with the arrow keys and opens one with Enter', async () => {
    // The last test reset the status filter: let the queued column fill again
    // first, or a key lands while its cards are still being drawn.
    await page
      .locator('section[data-column="queued"] article[data-task-id]')
      .nth(99)
      .waitFor({ timeout: STEP_MS });
    await card('running', 't2').focus();
    await page.keyboard.press('ArrowLeft');
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-task-id'));
    const first = await focused();
    expect(first).toMatch(/^t\d+$/);
    await page.keyboard.press('ArrowDown');
    expect(await focused()).not.toBe(first);
    const opened = await focused();
    await page.keyboard.press('Enter');
    // page.url() learns of a same-document navigation a moment after the key's
    // handler ran (CI once read it empty): ask the page itself, with a deadline.
    await page.waitForFunction((id) => location.hash === `#/jobs/${id}`, opened, {
      timeout: STEP_MS,
    });
    await page.locator('section.job').waitFor({ timeout: STEP_MS });
    await page.evaluate(() => {
      location.hash = '#/';
    });
  });

  it('shows a job: what it runs, every attempt, the live tail, then the stored output, paged and downloadable', async () => {
    const { taskId } = await h.board.createTask('bob', {
      ...spec('job page'),
      env: { API_KEY: 'never-shown', MODE: 'ci' },
      key: 'order-4711',
      timeLimitMs: 1_800_000,
    });
    const job = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await job.goto(`${h.server.url}/#token=${BOB}`);
    await job.locator('body[data-connection="live"]').waitFor({ timeout: STEP_MS });
    await job.evaluate((id) => {
      location.hash = `#/jobs/${id}`;
    }, taskId);
    const section = job.locator('section.job');
    await section.locator('h1', { hasText: 'job page' }).waitFor({ timeout: STEP_MS });
    expect(await section.locator('dd.argv-full').textContent()).toBe('["echo","job page"]');
    expect(await section.textContent()).toContain('API_KEY, MODE');
    expect(await section.textContent()).toContain('submit keyorder-4711');
    expect(await section.textContent()).toContain('time limit30m');
    expect(await section.textContent()).not.toContain('never-shown');
    // Bob's cap is the global 2 and t4 holds one runner: this one waits or runs; make it run.
    h.board.finish('t4', 0);
    for (let i = 1; i <= 700; i += 1) h.board.output(taskId, `out ${i}`);
    await section.locator('pre', { hasText: 'out 700' }).waitFor({ timeout: STEP_MS });
    // Running: the limit says how long it gives the run.
    expect(await section.locator('dd .limit').textContent()).toMatch(/^ · 29m \d+s left$/);
    expect(await section.textContent()).toContain('live: the last 20 lines');
    h.board.finish(taskId, 1);
    await section
      .locator('.meta', { hasText: 'lines 201–700 of 700' })
      .waitFor({ timeout: STEP_MS });
    await section.locator('button.earlier').click();
    await section.locator('.meta', { hasText: 'lines 1–700 of 700' }).waitFor({ timeout: STEP_MS });
    const [download] = await Promise.all([
      job.waitForEvent('download', { timeout: STEP_MS }),
      section.locator('button.download').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${taskId}-${h.board.get(taskId).sessionId}.log`);
    expect(await section.locator('tbody tr').count()).toBe(1);
    expect(await section.locator('tbody tr td.why').textContent()).toBe('exit_code');
    await section.locator('button.retry').click();
    await section.locator('tbody tr').nth(1).waitFor({ timeout: STEP_MS });
    expect(await section.locator('.inspect').count()).toBe(0);
    // Alice cannot read Bob's job; the admin can, with a link to its TaskRunner.
    await page.evaluate((id) => {
      location.hash = `#/jobs/${id}`;
    }, taskId);
    await page.locator('section.job', { hasText: 'not yours' }).waitFor({ timeout: STEP_MS });
    await page.evaluate(() => {
      location.hash = '#/';
    });
    await job.close();
  });

  it('gives the admin no create form, the user on every card, and a user filter', async () => {
    const admin = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await admin.goto(`${h.server.url}/#token=${ADMIN}`);
    await admin.locator('body[data-view="admin"]').waitFor({ timeout: STEP_MS });
    expect(await admin.locator('#create').count()).toBe(0);
    const bobCard = admin.locator('article[data-task-id="t4"]');
    expect(await bobCard.locator('.user').textContent()).toBe('bob');
    await admin.selectOption('select[name="user"]', 'bob');
    await admin.locator('section[data-column="queued"] h2 .count', { hasText: /^0$/ }).waitFor();
    expect(await admin.locator('article').count()).toBeGreaterThanOrEqual(1);
    await admin.locator('article[data-task-id="t4"] a.title').click();
    await admin.locator('section.job a.inspect').waitFor({ timeout: STEP_MS });
    await admin.close();
  });

  it('shows how long a running card has left of its time limit', async () => {
    // Bob's run ends (his retried job); Alice is at her cap, so Carol's limited task takes the runner.
    for (const c of h.board.cards('bob')) if (c.column === 'running') h.board.finish(c.taskId, 0);
    const { taskId } = await h.board.createTask('carol', {
      ...spec('limited run'),
      timeLimitMs: 90_000,
    });
    expect(h.board.get(taskId).column).toBe('running');
    const admin = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await admin.goto(`${h.server.url}/#token=${ADMIN}`);
    const limit = admin.locator(`article[data-task-id="${taskId}"] .meta .limit`);
    await limit.waitFor({ timeout: STEP_MS });
    expect(await limit.textContent()).toMatch(/^ · 1m [0-2]\ds left$/);
    expect(await limit.getAttribute('title')).toMatch(/^time limit 90s: stopped at /);
    // Alice's run has no limit, and says nothing of one.
    expect(await admin.locator('article[data-task-id="t2"] .meta').textContent()).toMatch(
      /^running for \S+$/,
    );
    await admin.close();
  });
});
