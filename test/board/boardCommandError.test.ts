import { describe, expect, it } from 'vitest';
import { RuntimeCommandError } from '../../src/actors/runtimeTypes.js';
import * as errors from '../../src/board/boardCommandError.js';
import { BoardCommandError, isBoardCommandError } from '../../src/board/boardCommandError.js';
import * as port from '../../src/board/boardPort.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/boardCommandError.ts', import.meta.url), errors);

describe('isBoardCommandError', () => {
  it("recognises the runtime's command errors: they are the port's class", () => {
    for (const code of ['not_found', 'conflict', 'invalid', 'unavailable'] as const) {
      expect(isBoardCommandError(new RuntimeCommandError(code, 'x'))).toBe(true);
    }
  });

  it('is the class the port exports: one class on both sides, not a copy', () => {
    expect(port.BoardCommandError).toBe(BoardCommandError);
    expect(port.isBoardCommandError).toBe(isBoardCommandError);
    expect(port.BOARD_COMMAND_STATUS).toBe(errors.BOARD_COMMAND_STATUS);
  });
});
