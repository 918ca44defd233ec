/**
 * A child process of the recovery bench that holds one lock until it is
 * killed: a boot lock (`boot <url> <owner>`) or the Reconciler's lock inside
 * a pass that never ends (`reconciler <url>`). Prints `held` once it holds it.
 */
import { withReconcilerLock } from '../../src/actors/reconciler.js';
import { connect, holdBootLock } from '../../src/db/index.js';
import { REAL_TIMERS } from '../../src/db/listen.js';

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
} else {
  const h = await connect({ databaseUrl: url, poolMax: 2 });
  await withReconcilerLock(h.db, async () => {
    process.stdout.write('held\n');
    await new Promise(() => {});
  });
}
