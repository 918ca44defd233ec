import { describe, expect, it } from 'vitest';
import { formatLocalHandle } from '../../src/containers/local/localHandle.js';
import { handleFor } from '../../src/containers/wrapper.js';
import { handle } from '../../src/db/inputs.js';

describe('the handle a row stores', () => {
  it("takes every backend's handles: a service or container name, and a local run's pid form", () => {
    const local = formatLocalHandle({
      sessionId: 'ses_1',
      pid: 4242,
      startToken: '45565',
      bootToken: '2d47ad76',
    });
    for (const h of [handleFor('ses_1'), local, 'roundtable-ses_1.1.abc']) {
      expect(handle.safeParse(h).success).toBe(true);
    }
    for (const bad of ['', '-x', 'a b', 'a;b', 'x'.repeat(1000)]) {
      expect(handle.safeParse(bad).success).toBe(false);
    }
  });
});
