import { describe, expect, it } from 'vitest';
import * as parse from '../../src/ui-server/parseClientFrame.js';
import { runDocExamples } from '../support/docExamples.js';

const { parseClientFrame } = parse;
runDocExamples(new URL('../../src/ui-server/parseClientFrame.ts', import.meta.url), parse);

const codeOf = (raw: string) => {
  const r = parseClientFrame(raw, false);
  return 'code' in r ? r.code : r.type;
};

describe('parseClientFrame', () => {
  it('answers unsupported_version to another version, whatever its other fields', () => {
    expect(codeOf('{"type":"subscribe","v":2}')).toBe('unsupported_version');
    expect(codeOf('{"type":"subscribe","v":2,"window":{"resume":{"seq":3}}}')).toBe(
      'unsupported_version',
    );
    expect(codeOf('{"type":"subscribe","v":2,"since":3}')).toBe('unsupported_version');
  });

  it('keeps bad_frame for a v that is not a version number, and for v1 with unknown keys', () => {
    expect(codeOf('{"type":"subscribe","v":"1"}')).toBe('bad_frame');
    expect(codeOf('{"type":"subscribe"}')).toBe('bad_frame');
    expect(codeOf('{"type":"subscribe","v":1,"window":{"resume":1}}')).toBe('bad_frame');
    expect(codeOf('{"type":"subscribe","v":1}')).toBe('subscribe');
  });
});
