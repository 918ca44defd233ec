/**
 * The board's first paint as the page sees it, for the browser test and the
 * board bench: from the navigation's start to the frame that first draws
 * cards (a MutationObserver installed before any script notes the first
 * card, the next animation frame is the one that paints it), with
 * chromium's first-contentful-paint and the bundle's fetch next to it.
 */
import type { Page } from 'playwright-core';

export interface FirstPaint {
  /** Navigation start to the frame that first draws cards. */
  cardsPaintedMs: number;
  firstContentfulPaintMs: number | null;
  scriptMs: number | null;
  /** Cards in the page once drawn, and the queued column's count as shown. */
  articles: number;
  queuedCount: string;
}

export async function measureFirstPaint(
  page: Page,
  url: string,
  timeoutMs: number,
): Promise<FirstPaint> {
  // A string, not a function: tsx (the bench) would wrap a function's inner
  // functions in a helper the page does not have.
  await page.addInitScript(`
    new MutationObserver((_, observer) => {
      if (window.cardsPainted !== undefined || document.querySelector('article') === null) return;
      window.cardsPainted = -1;
      observer.disconnect();
      requestAnimationFrame((t) => { window.cardsPainted = t; });
    }).observe(document, { childList: true, subtree: true });
  `);
  await page.goto(url);
  await page.waitForFunction(
    () => ((window as unknown as { cardsPainted?: number }).cardsPainted ?? -1) > 0,
    undefined,
    { timeout: timeoutMs },
  );
  return page.evaluate(() => {
    const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? null;
    const js = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/board.js')) as
      | PerformanceResourceTiming
      | undefined;
    return {
      cardsPaintedMs: Math.round((window as unknown as { cardsPainted: number }).cardsPainted),
      firstContentfulPaintMs: fcp === null ? null : Math.round(fcp),
      scriptMs: js ? Math.round(js.responseEnd - js.startTime) : null,
      articles: document.querySelectorAll('article').length,
      queuedCount:
        document.querySelector('section[data-column="queued"] .count')?.textContent ?? '',
    };
  });
}
