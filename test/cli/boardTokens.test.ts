import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadBoardTokens, TOKENS_FILE } from '../../src/cli/boardTokens.js';

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

  it('refuses a damaged file instead of silently replacing the tokens people use', () => {
    writeFileSync(join(dir, TOKENS_FILE), '{"admin": 3}');
    expect(() => loadBoardTokens(dir, { users: {} }, [])).toThrow(/damaged/);
  });
});
