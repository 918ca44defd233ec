/**
 * A deploy kills the boot in place (no shutdown, like a replaced app
 * container), and a dead process has no timers: the follow loops of its
 * runners must not go on reading the run's output file on the shared clock
 * beside the next boot's. Counted on the simulated cluster's API: each boot
 * in turn adopts the same quiet run, and the reads of its output file a
 * minute stay those of one follower however many boots died before.
 */
import { expect, test } from 'vitest';
import { createTestRuntime } from '../../src/testing/index.js';

test("a killed boot's followers stop: after each deploy only the live boot reads the run's file", async () => {
  const h = await createTestRuntime({ dispatchPollMs: 3_600_000 });
  try {
    let outputReads = 0;
    const readFile = h.cluster.api.readFile;
    h.cluster.api.readFile = (name, path) => {
      if (path.includes('roundtable-output-')) outputReads += 1;
      return readFile(name, path);
    };
    // A run that prints nothing for long after the deploys: its follower settles at its quiet period.
    await h.runtime.submit('alice', { title: 't', image: 'runner:v1', command: ['sleep', '3600'] });
    await h.advance(5_000);
    /** Output reads in a minute, after one more deploy and a minute for the adopter to settle. */
    const readsAMinuteAfterADeploy = async () => {
      await h.deploy();
      await h.advance(60_000);
      outputReads = 0;
      await h.advance(60_000);
      return outputReads;
    };
    const oneBootDied = await readsAMinuteAfterADeploy();
    // Two deaths tell a leak (12 then 24) from none; a third adds nothing but time.
    const twoDied = await readsAMinuteAfterADeploy();
    // One follower, read every 5 s while quiet (the simulated backend's 1 s times five).
    expect([oneBootDied, twoDied]).toEqual([12, 12]);
    expect((await h.sessions()).map((s) => [s.status, s.owner])).toEqual([
      ['running', 'test-node@boot3'],
    ]);
    expect(h.errors).toEqual([]);
  } finally {
    await h.close();
  }
});
