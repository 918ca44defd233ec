import { describe, expect, it } from 'vitest';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import * as port from '../../src/ui-server/boardPort.js';
import { isBoardCommandError } from '../../src/ui-server/boardPort.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/boardPort.ts', import.meta.url), port);

describe('isBoardCommandError', () => {
  it("recognises the runtime's command errors, which implement the port structurally", () => {
    for (const code of ['not_found', 'conflict', 'invalid', 'unavailable'] as const) {
      expect(isBoardCommandError(new RuntimeCommandError(code, 'x'))).toBe(true);
    }
  });
});
