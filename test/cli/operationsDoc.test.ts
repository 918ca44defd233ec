/** docs/operations.md must list every setting and exit code the CLI has. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SETTINGS } from '../../src/cli/cliSettings.js';
import { EXIT } from '../../src/cli/exitCodes.js';

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');

describe('docs/operations.md', () => {
  it.each(SETTINGS.map((s) => [s.key, s] as const))('documents %s', (key, s) => {
    expect(doc).toContain(`\`${key}\``);
    if (s.flag) expect(doc).toContain(`\`${s.flag}\``);
    if (s.env) expect(doc).toContain(`\`${s.env}\``);
  });

  it.each(Object.entries(EXIT))('documents exit code %s (%i)', (_, code) => {
    expect(doc).toMatch(new RegExp(`^\\| ${code} +\\|`, 'm'));
  });
});
