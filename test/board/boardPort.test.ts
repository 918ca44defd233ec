import { describe, expect, it } from 'vitest';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import * as port from '../../src/board/boardPort.js';
import { isBoardCommandError } from '../../src/board/boardPort.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/boardPort.ts', import.meta.url), port);

describe('isBoardCommandError', () => {
  it("recognises the runtime's command errors: they are the port's class", () => {
    for (const code of ['not_found', 'conflict', 'invalid', 'unavailable'] as const) {
      expect(isBoardCommandError(new RuntimeCommandError(code, 'x'))).toBe(true);
    }
  });
});
