import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PAGE_CSP, PAGE_HTML, pageScript } from '../../src/ui-server/pageBundle.js';

describe('the board page', () => {
  it('bundles no zod: the client reads frames with serverFrameCheck.ts (docs/board.md, first paint)', async () => {
    const script = await pageScript();
    expect(script).toContain('BAD_SERVER_FRAME');
    // zod's instances keep their state under `_zod`, a property name minifying keeps.
    expect(script).not.toContain('_zod');
  });

  it('lets its inline early socket run: the CSP names that script’s hash', () => {
    const inline = /<script>([\s\S]*?)<\/script>/.exec(PAGE_HTML)?.[1];
    expect(inline).toContain('new WebSocket(');
    const hash = createHash('sha256').update(inline!).digest('base64');
    expect(PAGE_CSP).toContain(`'sha256-${hash}'`);
  });
});
