import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as boardTokens from '../../src/cli/boardTokens.js';
import { readBoardTokens, TOKENS_FILE } from '../../src/cli/boardTokens.js';

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
