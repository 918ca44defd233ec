import { expect, it } from 'vitest';
import { connect } from '../../src/db/connect.js';
import * as startupSettings from '../../src/db/startupSettings.js';
import { runDocExamples } from '../support/docExamples.js';
import {
  describeWithPgbouncer,
  PERMISSIVE_SESSION_POOLER,
  pooledDatabase,
} from '../support/privatePgbouncer.js';
import { describeServer, serverDatabase } from '../support/serverSuite.js';

runDocExamples(new URL('../../src/db/startupSettings.ts', import.meta.url), startupSettings);

const ALL = ['idle_in_transaction_session_timeout', 'lock_timeout', 'statement_timeout'];

describeServer('the startup deadlines on the test server', () => {
  const server = serverDatabase();

  it('holds every one sent; one set to 0 is not sent and not asked about', async () => {
    expect(server.main.settingsNotInForce).toEqual([]);
    const h = await connect({
      databaseUrl: server.url,
      lockTimeoutMs: 0,
      statementTimeoutMs: 1234,
    });
    try {
      expect(h.settingsNotInForce).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describeWithPgbouncer(
  'the startup deadlines behind a session pooler that drops them [private pgbouncer]',
  (getPooler, server) => {
    const store = pooledDatabase(getPooler, server, 'roundtable_settings');

    it('names each one the server does not hold; the session probe passes (its sessions are real)', async () => {
      const h = await store.open();
      expect(h.settingsNotInForce).toEqual(ALL);
      await expect(h.probeSession?.()).resolves.toBeUndefined();
    });

    it('says nothing with pooler: transaction, which sends none', async () => {
      const h = await store.open({ pooler: 'transaction' });
      expect(h.settingsNotInForce).toEqual([]);
    });
  },
  PERMISSIVE_SESSION_POOLER,
);
