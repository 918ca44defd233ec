import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import {
  resolveUiServerOptions,
  UI_SERVER_DEFAULTS,
  type UiServerOptions,
} from '../../src/ui-server/uiServerOptions.js';
import { FakeBoard } from '../support/fakeBoard.js';
import { TOKENS } from './wsHarness.js';

const board = new FakeBoard();
const base: UiServerOptions = {
  source: board,
  commands: board,
  tokens: TOKENS,
  port: 0,
  host: '127.0.0.1',
};
const logger = () => pino({ level: 'silent' });
const resolve = (o: unknown) => resolveUiServerOptions(o as UiServerOptions, logger);

describe('resolveUiServerOptions', () => {
  it('applies every default, 64 KiB maxPayload among them', () => {
    const r = resolve(base);
    expect(r.limits).toEqual(UI_SERVER_DEFAULTS);
    expect(r.limits.maxPayload).toBe(65_536);
  });

  it('keeps the limits given', () => {
    expect(resolve({ ...base, limits: { heartbeatMs: 5 } }).limits.heartbeatMs).toBe(5);
  });

  it.each([
    [{ ...base, prot: 1 }, /prot: unknown option, did you mean "port"/],
    [{ ...base, limits: { heartbeatMS: 1 } }, /limits\.heartbeatMS: .*did you mean "heartbeatMs"/],
    [{ ...base, zebra: 1 }, /zebra: unknown option$/],
    [{ ...base, limits: { maxPayload: 0 } }, /limits\.maxPayload/],
    [{ ...base, limits: { maxPayload: 1.5 } }, /limits\.maxPayload/],
    [{ ...base, port: 70000 }, /option port/],
    [
      { ...base, tokens: { users: { alice: 'short' }, admin: TOKENS.admin } },
      /tokens\.users\.alice/,
    ],
    [{ ...base, tokens: { users: TOKENS.users, admin: 'has spaces in it, no' } }, /tokens\.admin/],
    // A config read with JSON.parse: an own __proto__ key, which zod's record skips.
    [
      {
        ...base,
        tokens: {
          users: JSON.parse(`{"__proto__": "${'p'.repeat(20)}"}`),
          admin: TOKENS.admin,
        },
      },
      /tokens\.users\.__proto__: is not a user id a token can be given to/,
    ],
    [
      { ...base, tokens: { users: { x: TOKENS.admin }, admin: TOKENS.admin } },
      /tokens\.admin: the admin token is also a user token/,
    ],
    [{ ...base, source: {} }, /option source: must implement BoardSource/],
    [{ ...base, commands: { createTask() {} } }, /option commands/],
    [
      { ...base, limits: { maxTcpConnections: 100, maxTcpConnectionsPerAddress: 100 } },
      /limits\.maxTcpConnectionsPerAddress: must be below maxTcpConnections \(100\)/,
    ],
    [
      { ...base, limits: { maxTcpConnectionsPerAddress: 12_000 } },
      /limits\.maxTcpConnectionsPerAddress: must be below maxTcpConnections \(12000\)/,
    ],
    [
      { ...base, limits: { headersTimeoutMs: 2_000, requestTimeoutMs: 1_000 } },
      /limits\.headersTimeoutMs: must be at most requestTimeoutMs \(1000\)/,
    ],
  ])('rejects %#', (options, message) => {
    expect(() => resolve(options)).toThrow(message);
    try {
      resolve(options);
    } catch (err) {
      expect((err as { code: string }).code).toBe('UI_CONFIG');
    }
  });
});
