import { describe, expect, it } from 'vitest';
import * as mod from '../../../src/ui-server/inspector/parseInspectFrame.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/parseInspectFrame.ts', import.meta.url),
  mod,
);

describe('parseInspectFrame', () => {
  it('names the bad field of a frame that parses but is not a select', () => {
    expect(mod.parseInspectFrame('{"type":"select","sessionId":5}', false)).toEqual({
      code: 'bad_frame',
      message: expect.stringMatching(/^sessionId: /),
    });
  });

  it('refuses a session id longer than 200 characters', () => {
    const long = JSON.stringify({ type: 'select', sessionId: 'x'.repeat(201) });
    expect(mod.parseInspectFrame(long, false)).toHaveProperty('code', 'bad_frame');
  });

  it('never throws, whatever the text', () => {
    for (const text of ['', 'null', '[]', '"select"', '{"type":null}', '\u0000'])
      expect(() => mod.parseInspectFrame(text, false)).not.toThrow();
  });
});
