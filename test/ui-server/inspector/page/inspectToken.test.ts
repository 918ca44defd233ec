import { describe, expect, it } from 'vitest';
import * as mod from '../../../../src/ui-server/inspector/page/inspectToken.js';
import { runDocExamples } from '../../../support/docExamples.js';

runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/inspectToken.ts', import.meta.url),
  mod,
);

const { BOARD_TOKEN_KEY, INSPECT_TOKEN_KEY, readInspectToken } = mod;

function store(initial: Record<string, string> = {}) {
  const m = new Map(Object.entries(initial));
  return {
    m,
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
  };
}

describe('readInspectToken', () => {
  it("falls back to the board's token when the inspector holds none", () => {
    const s = store({ [BOARD_TOKEN_KEY]: 'board' });
    expect(readInspectToken('#runner=ses_1', s)).toEqual({ token: 'board', hash: null });
    expect(s.m.has(INSPECT_TOKEN_KEY)).toBe(false);
  });

  it("prefers the inspector's own stored token to the board's", () => {
    const s = store({ [BOARD_TOKEN_KEY]: 'board', [INSPECT_TOKEN_KEY]: 'own' });
    expect(readInspectToken('', s).token).toBe('own');
  });

  it('leaves a board token the tab holds alone when the fragment brings another', () => {
    const s = store({ [BOARD_TOKEN_KEY]: 'alice' });
    expect(readInspectToken('#token=adm', s)).toEqual({ token: 'adm', hash: '' });
    expect(s.m.get(BOARD_TOKEN_KEY)).toBe('alice');
  });

  it('treats an empty token in the fragment as none, and leaves the address bar alone', () => {
    expect(readInspectToken('#token=', store())).toEqual({ token: null, hash: null });
  });
});
