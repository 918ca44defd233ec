import { describe, expect, it } from 'vitest';
import { clientFrameSchema } from '../../src/board/boardProtocol.js';
import { name } from '../../src/db/inputs.js';

describe('clientFrameSchema', () => {
  it("lets a window's filter name any user id the runtime accepts (1-128 characters)", () => {
    const longest = `u${'x'.repeat(127)}`;
    expect(name.safeParse(longest).success).toBe(true);
    const frame = { type: 'subscribe', v: 1, window: { filter: { user: longest } } };
    expect(clientFrameSchema.safeParse(frame).success).toBe(true);
    const over = { type: 'subscribe', v: 1, window: { filter: { user: `${longest}y` } } };
    expect(clientFrameSchema.safeParse(over).success).toBe(false);
  });
});
