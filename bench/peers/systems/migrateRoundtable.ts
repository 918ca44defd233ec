/** The roundtable rows' setup: the scratch database migrated to this commit's schema. */
import { connect, migrate } from '../../../src/db/index.js';

export async function migrateRoundtable(url: string): Promise<void> {
  const h = await connect({ databaseUrl: url, poolMax: 1 });
  try {
    await migrate(h.db);
  } finally {
    await h.close();
  }
}
