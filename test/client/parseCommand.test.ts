import { fc, test } from '@fast-check/vitest';
import { describe, expect } from 'vitest';
import * as mod from '../../src/client/parseCommand.js';
import { parseCommandLine } from '../../src/client/parseCommand.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/parseCommand.ts', import.meta.url), mod);

/** POSIX quoting: every word in single quotes, a quote as '\\''. */
const quote = (argv: string[]) => argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');

describe('parseCommandLine', () => {
  // Any argv, quoted as a shell would need it, splits back into itself.
  test.prop([fc.array(fc.string({ minLength: 1 }), { minLength: 1, maxLength: 6 })], {
    numRuns: 300,
  })('round-trips quoted argv', (argv) => {
    const parsed = parseCommandLine(quote(argv));
    expect(parsed).toEqual({ ok: true, argv });
  });

  test.prop([fc.string()], { numRuns: 300 })(
    'never throws, and says why when there is no argv',
    (line) => {
      const parsed = parseCommandLine(line);
      if (parsed.ok) expect(parsed.argv.length).toBeGreaterThan(0);
      else expect(parsed.message.length).toBeGreaterThan(0);
    },
  );
});
