import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as boardTokens from '../../src/cli/boardTokens.js';
import { mergeTokens, readBoardTokens, TOKENS_FILE } from '../../src/cli/boardTokens.js';

const loadBoardTokens = (...args: Parameters<typeof boardTokens.loadBoardTokens>) =>
  boardTokens.loadBoardTokens(...args).tokens;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-tokens-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('loadBoardTokens', () => {
  it('generates tokens once and returns the same ones after a restart', () => {
    const first = loadBoardTokens(dir, { users: {} }, ['demo']);
    expect(first.admin).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const again = loadBoardTokens(dir, { users: {} }, ['demo']);
    expect(again).toEqual(first);
    expect(statSync(join(dir, TOKENS_FILE)).mode & 0o777).toBe(0o600);
  });

  it('adds a token for a new user and keeps the old ones', () => {
    const first = loadBoardTokens(dir, { users: {} }, ['demo']);
    const more = loadBoardTokens(dir, { users: {} }, ['demo', 'ann']);
    expect(more.users.demo).toBe(first.users.demo);
    expect(more.users.ann).toBeDefined();
  });

  it('lets configured tokens win without writing them to the file', () => {
    loadBoardTokens(dir, { users: {} }, ['demo']);
    const given = loadBoardTokens(dir, { admin: 'configured-admin-0001', users: {} }, ['demo']);
    expect(given.admin).toBe('configured-admin-0001');
    expect(readFileSync(join(dir, TOKENS_FILE), 'utf8')).not.toContain('configured-admin-0001');
  });

  it('a user no longer configured loses access; configured again, the same token works again', () => {
    const first = loadBoardTokens(dir, { users: {} }, ['demo']);
    const restart = boardTokens.loadBoardTokens(dir, { users: {} }, ['a']);
    expect(restart.revoked).toEqual(['demo']);
    expect(Object.keys(restart.tokens.users)).toEqual(['a']);
    // What the CLI reads to talk to the node: never the dropped user's token.
    expect(readBoardTokens(dir, { users: {} }).users).toEqual(restart.tokens.users);
    const file = JSON.parse(readFileSync(join(dir, TOKENS_FILE), 'utf8'));
    expect(file).toMatchObject({
      users: { a: restart.tokens.users.a },
      dropped: { demo: first.users.demo },
    });
    // Said once, at the start that dropped them.
    expect(boardTokens.loadBoardTokens(dir, { users: {} }, ['a']).revoked).toEqual([]);
    const back = boardTokens.loadBoardTokens(dir, { users: {} }, ['a', 'demo']);
    expect(back.tokens.users).toEqual({ a: restart.tokens.users.a, demo: first.users.demo });
    expect(JSON.parse(readFileSync(join(dir, TOKENS_FILE), 'utf8')).dropped).toBeUndefined();
  });

  it('a user given a token in the configuration is configured', () => {
    const given = loadBoardTokens(dir, { users: { bo: 'configured-bo-token-01' } }, ['demo']);
    expect(given.users).toEqual({ demo: expect.any(String), bo: 'configured-bo-token-01' });
  });

  it('the CLI reads the node’s tokens without writing, and says when there are none', () => {
    expect(() => readBoardTokens(dir, { users: {} })).toThrow(/missing/);
    expect(readBoardTokens(dir, { admin: 'configured-admin-0001', users: {} })).toEqual({
      admin: 'configured-admin-0001',
      users: {},
    });
    expect(() => readFileSync(join(dir, TOKENS_FILE))).toThrow();
  });

  it('refuses a damaged file instead of silently replacing the tokens people use', () => {
    writeFileSync(join(dir, TOKENS_FILE), '{"admin": 3}');
    expect(() => loadBoardTokens(dir, { users: {} }, [])).toThrow(/damaged/);
  });
});

describe('user names that are also names of Object.prototype', () => {
  // The user-name rule (cliConfig.ts) allows them; `roundtable start --users
  // constructor` failed to start (exit 5, "tokens.users.constructor: expected
  // string, received function") because `{}.constructor` was read as a token.
  const PROTO_NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];
  const TOKEN_RE = /^[A-Za-z0-9._~-]{16,256}$/;
  const userName = fc.oneof(
    fc.constantFrom(...PROTO_NAMES),
    fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,10}$/),
  );
  let n = 0;
  const make = () => `generated-token-${String(n++).padStart(8, '0')}`;

  test.prop([fc.uniqueArray(userName, { minLength: 1, maxLength: 6 }), fc.boolean()])(
    'every configured user gets a string token, kept across a restart and a drop',
    (users, dropFirst) => {
      const first = mergeTokens(undefined, { users: {} }, users, make);
      for (const u of users) expect(first.tokens.users[u]).toMatch(TOKEN_RE);
      expect(Object.keys(first.tokens.users).sort()).toEqual([...users].sort());
      // The file written is the file read back: JSON keeps every user.
      const stored = JSON.parse(JSON.stringify(first.file));
      const later = dropFirst ? users.slice(1) : users;
      const again = mergeTokens(stored, { users: {} }, later, make);
      for (const u of later) expect(again.tokens.users[u]).toBe(first.tokens.users[u]);
      expect(again.revoked).toEqual(dropFirst ? users.slice(0, 1) : []);
      expect(again.changed).toBe(dropFirst);
      const back = mergeTokens(JSON.parse(JSON.stringify(again.file)), { users: {} }, users, make);
      for (const u of users) expect(back.tokens.users[u]).toBe(first.tokens.users[u]);
    },
  );

  it('a node configured with the user constructor writes and reads its token', () => {
    const started = boardTokens.loadBoardTokens(dir, { users: {} }, ['constructor', 'toString']);
    expect(started.tokens.users.constructor).toMatch(TOKEN_RE);
    expect(started.tokens.users.toString).toMatch(TOKEN_RE);
    expect(readBoardTokens(dir, { users: {} }).users).toEqual(started.tokens.users);
  });
});
