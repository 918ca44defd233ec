/**
 * Screenshot comparison for the browser tests, with no image library: the
 * baseline and the new screenshot are decoded and compared pixel by pixel
 * in a blank page of the same chromium (canvas `getImageData`).
 *
 * Baselines live next to the test (committed). A missing baseline is written
 * and the check passes outside CI (say so in the commit); in CI it fails.
 * `UPDATE_SCREENSHOTS=1` rewrites them after an intended change. A differing
 * screenshot is written beside the baseline as `<name>.actual.png` (and a
 * `<name>.diff.png` in red), which `.gitignore` keeps out.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Browser } from 'playwright-core';

export interface ScreenshotVerdict {
  /** `written` when there was no baseline (or UPDATE_SCREENSHOTS asked). */
  status: 'same' | 'written' | 'different';
  /** Pixels whose colour moved more than the threshold, over all pixels. */
  differingRatio: number;
  width: number;
  height: number;
}

export interface CompareOptions {
  /** Largest per-channel difference (0-255) still counted the same: anti-aliasing noise. */
  channelThreshold?: number;
  /** Largest share of differing pixels still the same picture. */
  maxDifferingRatio?: number;
}

/** Compares `png` with the baseline at `baselinePath` (see the module doc). */
export async function compareScreenshot(
  browser: Browser,
  png: Buffer,
  baselinePath: string,
  o: CompareOptions = {},
): Promise<ScreenshotVerdict> {
  mkdirSync(dirname(baselinePath), { recursive: true });
  if (process.env.UPDATE_SCREENSHOTS === '1' || (!existsSync(baselinePath) && !process.env.CI)) {
    writeFileSync(baselinePath, png);
    return { status: 'written', differingRatio: 0, width: 0, height: 0 };
  }
  if (!existsSync(baselinePath))
    throw new Error(`no baseline at ${baselinePath} (CI does not write one)`);
  const baseline = readFileSync(baselinePath);
  const page = await browser.newPage();
  try {
    const r = await page.evaluate(
      async ({ a, b, threshold }) => {
        const load = async (b64: string) => {
          const img = new Image();
          img.src = `data:image/png;base64,${b64}`;
          await img.decode();
          return img;
        };
        const [ia, ib] = await Promise.all([load(a), load(b)]);
        if (ia.width !== ib.width || ia.height !== ib.height) {
          return { differing: -1, width: ib.width, height: ib.height, diff: '' };
        }
        const canvas = (img: HTMLImageElement) => {
          const c = document.createElement('canvas');
          c.width = img.width;
          c.height = img.height;
          const ctx = c.getContext('2d')!;
          ctx.drawImage(img, 0, 0);
          return { c, ctx, data: ctx.getImageData(0, 0, c.width, c.height) };
        };
        const A = canvas(ia);
        const B = canvas(ib);
        let differing = 0;
        const out = A.ctx.createImageData(A.c.width, A.c.height);
        for (let i = 0; i < A.data.data.length; i += 4) {
          let d = 0;
          for (let k = 0; k < 3; k++)
            d = Math.max(d, Math.abs(A.data.data[i + k]! - B.data.data[i + k]!));
          const hit = d > threshold;
          if (hit) differing += 1;
          out.data[i] = hit ? 255 : B.data.data[i]! / 3;
          out.data[i + 1] = hit ? 0 : B.data.data[i + 1]! / 3;
          out.data[i + 2] = hit ? 0 : B.data.data[i + 2]! / 3;
          out.data[i + 3] = 255;
        }
        A.ctx.putImageData(out, 0, 0);
        return {
          differing,
          width: ib.width,
          height: ib.height,
          diff: differing > 0 ? A.c.toDataURL('image/png') : '',
        };
      },
      {
        a: baseline.toString('base64'),
        b: png.toString('base64'),
        threshold: o.channelThreshold ?? 16,
      },
    );
    const ratio = r.differing < 0 ? 1 : r.differing / (r.width * r.height);
    const same = r.differing >= 0 && ratio <= (o.maxDifferingRatio ?? 0.002);
    if (!same) {
      writeFileSync(baselinePath.replace(/\.png$/, '.actual.png'), png);
      if (r.diff) {
        writeFileSync(
          baselinePath.replace(/\.png$/, '.diff.png'),
          Buffer.from(r.diff.slice(r.diff.indexOf(',') + 1), 'base64'),
        );
      }
    }
    return {
      status: same ? 'same' : 'different',
      differingRatio: ratio,
      width: r.width,
      height: r.height,
    };
  } finally {
    await page.close();
  }
}
