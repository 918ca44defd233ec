/**
 * Debian's chromium for the browser tests, driven by playwright-core (which
 * never downloads a browser here). Outside CI a missing chromium skips the
 * suite with its reason printed; in CI it is a failure, because CI installs it
 * (scripts/ci/30-chromium.sh).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

// Without the background-networking flags chromium keeps dialling out, and this
// machine refuses every such connection.
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Why `suite` must be skipped (printed once), or null when it can run. */
export function chromiumSkipReason(suite: string): string | null {
  if (existsSync(CHROMIUM) || process.env.CI) return null;
  const reason = `${CHROMIUM} is missing (apt-get install -y chromium; CI installs it)`;
  process.stdout.write(`${suite} skipped: ${reason}\n`);
  return reason;
}

/** Starts headless chromium, within 20 s. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: FLAGS, timeout: 20_000 });
}
