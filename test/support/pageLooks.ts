/**
 * The looks check the browser tests share (the inspector's and the board's):
 * a page in its own browser context at a width and colour scheme, nothing
 * sticking out sideways, the full-page screenshot compared with the
 * committed baseline (screenshots.ts, a copy left in test/artifacts/), and
 * axe-core with no serious or critical violation (axe.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import { axeViolations } from './axe.js';
import { compareScreenshot } from './screenshots.js';

export type Scheme = 'light' | 'dark';

/** One picture: its baseline's name, the viewport and the colour scheme. */
export interface LookShot {
  name: string;
  width: number;
  height: number;
  scheme: Scheme;
}

/** The pictures every page is checked in: wide, narrow, a phone, and wide in dark. */
export function lookShots(prefix: string): LookShot[] {
  return [
    { name: `${prefix}-1400`, width: 1400, height: 900, scheme: 'light' },
    { name: `${prefix}-900`, width: 900, height: 1000, scheme: 'light' },
    { name: `${prefix}-420`, width: 420, height: 900, scheme: 'light' },
    { name: `${prefix}-1400-dark`, width: 1400, height: 900, scheme: 'dark' },
  ];
}

export const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname;

/** Browser contexts for the pictures, each closed by `close()`. */
export class LookContexts {
  private readonly contexts: BrowserContext[] = [];
  constructor(readonly browser: Browser) {}

  /** A fresh page at `width` × `height` in `scheme`, with motion reduced; page errors collected. */
  async page(
    width: number,
    height: number,
    scheme: Scheme = 'light',
  ): Promise<{ page: Page; errors: string[] }> {
    const ctx = await this.browser.newContext({
      viewport: { width, height },
      colorScheme: scheme,
      reducedMotion: 'reduce',
    });
    this.contexts.push(ctx);
    const page = await ctx.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    return { page, errors };
  }

  async close(): Promise<void> {
    for (const c of this.contexts.splice(0)) await c.close().catch(() => {});
  }
}

/**
 * Asserts `page` (drawn and settled) looks as its baseline `shot.name` in
 * `baselines` does, fits its width, and has no serious accessibility fault.
 */
export async function expectLooksAsBefore(
  browser: Browser,
  page: Page,
  shot: LookShot,
  baselines: string,
): Promise<void> {
  // Nothing may stick out sideways: a phone shows every column, one under another.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  const png = await page.screenshot({ fullPage: true, animations: 'disabled', caret: 'hide' });
  mkdirSync(ARTIFACTS, { recursive: true });
  writeFileSync(`${ARTIFACTS}${shot.name}.png`, png);
  const verdict = await compareScreenshot(browser, png, `${baselines}${shot.name}.png`);
  expect(
    verdict.status,
    `differs from the baseline by ${(verdict.differingRatio * 100).toFixed(2)}%`,
  ).not.toBe('different');
  const violations = await axeViolations(page);
  expect(violations, JSON.stringify(violations, null, 1)).toEqual([]);
}
