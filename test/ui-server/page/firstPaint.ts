/**
 * The board's first paint as the page sees it, for the browser test and the
 * board bench: from the navigation's start to the frame that first draws
 * cards (a MutationObserver installed before any script notes the first
 * card, the next animation frame is the one that paints it: the time its
 * callbacks run, not the frame's own timestamp, which can be older), with
 * chromium's first-contentful-paint and the bundle's fetch next to it.
 *
 * The stages on the way are read the same way, by an init script that runs
 * before the page's own: the HTML's and the bundle's arrival (Resource
 * Timing), the bundle starting to run (its look-up of `#app`), the
 * socket's creation, open, hello, subscribe and snapshot (a wrapped
 * WebSocket), so the page's code carries no measuring of its own.
 */
import type { Page } from 'playwright-core';

/** Milliseconds from the navigation's start to each stage, in the order they happen. */
export interface PaintStages {
  /** The HTML's last byte. */
  html: number;
  /** board.js's last byte. */
  scriptLoaded: number | null;
  /** board.js starts running (it looks up `#app` first thing). */
  scriptRan: number | null;
  socketCreated: number | null;
  socketOpen: number | null;
  hello: number | null;
  /**
   * A subscribe sent as a message. null when the page subscribes in the
   * upgrade URL (`/ws?subscribe=`, what the inline early socket does): its
   * snapshot then follows the hello with no message from the page.
   */
  subscribeSent: number | null;
  snapshot: number | null;
  /** The first card is in the DOM. */
  rendered: number;
  /** The frame that draws it. */
  painted: number;
}

export interface FirstPaint {
  /** Navigation start to the frame that first draws cards. */
  cardsPaintedMs: number;
  firstContentfulPaintMs: number | null;
  scriptMs: number | null;
  /** board.js's bytes on the wire. */
  scriptBytes: number | null;
  /** The snapshot frame's characters. */
  snapshotChars: number | null;
  stages: PaintStages;
  /** Cards in the page once drawn, and the queued column's count as shown. */
  articles: number;
  queuedCount: string;
}

// A string, not a function: tsx (the bench) would wrap a function's inner
// functions in a helper the page does not have.
const WATCH_PAGE = `
  const marks = (window.paintMarks = {});
  const note = (name) => { if (marks[name] === undefined) marks[name] = performance.now(); };
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      note('socketCreated');
      this.addEventListener('open', () => note('socketOpen'));
      this.addEventListener('message', (ev) => {
        const type = /"type":"(\\w+)"/.exec(String(ev.data).slice(0, 200))?.[1];
        note(type);
        if (type === 'snapshot') marks.snapshotChars = String(ev.data).length;
      });
    }
    send(data) {
      if (String(data).includes('"subscribe"')) note('subscribeSent');
      super.send(data);
    }
  };
  const byId = document.getElementById.bind(document);
  document.getElementById = (id) => {
    if (id === 'app') note('scriptRan');
    return byId(id);
  };
  new MutationObserver((_, observer) => {
    if (window.cardsPainted !== undefined || document.querySelector('article') === null) return;
    window.cardsPainted = -1;
    note('rendered');
    observer.disconnect();
    requestAnimationFrame(() => { window.cardsPainted = performance.now(); });
  }).observe(document, { childList: true, subtree: true });
`;

/** What {@link measureFirstPaint} returns, read in the page once it drew cards (a string, as above). */
const READ_PAGE = `(() => {
  const at = (ms) => (ms === undefined ? null : Math.round(ms));
  const fcp = performance.getEntriesByName('first-contentful-paint')[0]?.startTime;
  const nav = performance.getEntriesByType('navigation')[0];
  const js = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/board.js'));
  const m = window.paintMarks;
  return {
    cardsPaintedMs: Math.round(window.cardsPainted),
    firstContentfulPaintMs: at(fcp),
    scriptMs: js ? Math.round(js.responseEnd - js.startTime) : null,
    scriptBytes: js ? js.encodedBodySize : null,
    snapshotChars: m.snapshotChars ?? null,
    stages: {
      html: Math.round(nav.responseEnd),
      scriptLoaded: js ? Math.round(js.responseEnd) : null,
      scriptRan: at(m.scriptRan),
      socketCreated: at(m.socketCreated),
      socketOpen: at(m.socketOpen),
      hello: at(m.hello),
      subscribeSent: at(m.subscribeSent),
      snapshot: at(m.snapshot),
      rendered: Math.round(m.rendered),
      painted: Math.round(window.cardsPainted),
    },
    articles: document.querySelectorAll('article').length,
    queuedCount: document.querySelector('section[data-column="queued"] .count')?.textContent ?? '',
  };
})()`;

export async function measureFirstPaint(
  page: Page,
  url: string,
  timeoutMs: number,
): Promise<FirstPaint> {
  await page.addInitScript(WATCH_PAGE);
  await page.goto(url);
  await page.waitForFunction(
    () => ((window as unknown as { cardsPainted?: number }).cardsPainted ?? -1) > 0,
    undefined,
    { timeout: timeoutMs },
  );
  return page.evaluate<FirstPaint>(READ_PAGE);
}

/** The median of each stage over `runs` (a stage missing from a run is left out of it). */
export function medianStages(runs: PaintStages[]): Record<keyof PaintStages, number | null> {
  const keys = Object.keys(runs[0]!) as Array<keyof PaintStages>;
  return Object.fromEntries(
    keys.map((k) => {
      const xs = runs
        .map((r) => r[k])
        .filter((x): x is number => x !== null)
        .sort((a, b) => a - b);
      return [k, xs.length === 0 ? null : xs[Math.floor(xs.length / 2)]!];
    }),
  ) as Record<keyof PaintStages, number | null>;
}
