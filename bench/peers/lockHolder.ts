/**
 * A child process of the recovery bench that holds a boot lock until it is
 * killed (`boot <url> <owner>`). Prints `held` once it holds it.
 */

import { REAL_TIMERS } from '../../src/db/dedicatedClient.js';
import { holdBootLock } from '../../src/db/index.js';

const [kind, url = '', owner = 'bench@x'] = process.argv.slice(2);
if (kind === 'boot') {
  await holdBootLock({
    client: { connectionString: url, query_timeout: 2_000 },
    owner,
    pingMs: 1_000,
    retryMinMs: 100,
    retryMaxMs: 1_000,
    closeTimeoutMs: 1_000,
    timers: REAL_TIMERS,
    onState: (s) => {
      if (s === 'held') process.stdout.write('held\n');
    },
    onError: () => undefined,
  });
}
