/**
 * The board's bearer tokens: the admin's and one per user. Given by config,
 * or generated once and kept in `<dataDir>/tokens.json` (mode 0600), so the
 * URLs a newcomer bookmarked keep working after a restart.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { errorCode } from '../common/errorCode.js';
import { CliError } from './exitCodes.js';

/** Tokens by owner: `users` maps a user id to its token. */
export interface BoardTokens {
  admin: string;
  users: Record<string, string>;
}

const TOKEN = /^[A-Za-z0-9._~-]{16,256}$/;
const fileShape = z.object({
  admin: z.string().regex(TOKEN),
  users: z.record(z.string(), z.string().regex(TOKEN)),
});

export const TOKENS_FILE = 'tokens.json';

/** A new random token (32 base64url characters: 192 bits). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Merges configured tokens over stored ones and fills the gaps. Pure.
 *
 * @example
 * ```ts
 * const make = () => 'generated-token-000000'
 * mergeTokens({ admin: 'stored-admin-token-0', users: {} }, { users: {} }, ['ann'], make) // => { tokens: { admin: 'stored-admin-token-0', users: { ann: 'generated-token-000000' } }, changed: true }
 * mergeTokens(undefined, { admin: 'given-admin-token-00', users: {} }, [], make).tokens.admin // => 'given-admin-token-00'
 * mergeTokens(undefined, { users: { ann: 'same-token-00000000', bo: 'same-token-00000000' } }, [], make) // throws CLI_CONFIG
 * ```
 */
export function mergeTokens(
  stored: BoardTokens | undefined,
  configured: { admin?: string | undefined; users: Record<string, string> },
  users: readonly string[],
  make: () => string = newToken,
): { tokens: BoardTokens; changed: boolean } {
  let changed = stored === undefined;
  const admin = configured.admin ?? stored?.admin ?? make();
  const result: Record<string, string> = { ...(stored?.users ?? {}), ...configured.users };
  for (const user of users) {
    if (result[user] === undefined) {
      result[user] = make();
      changed = true;
    }
  }
  const seen = new Map<string, string>([[admin, 'the admin']]);
  for (const [user, token] of Object.entries(result)) {
    const other = seen.get(token);
    if (other !== undefined) {
      throw new CliError(
        'CLI_CONFIG',
        `tokens.users.${user}: same token as ${other}; every token must be unique`,
      );
    }
    seen.set(token, user);
  }
  return { tokens: { admin, users: result }, changed };
}

/** Reads `<dataDir>/tokens.json`, merges, and writes it back when something was generated. */
export function loadBoardTokens(
  dataDir: string,
  configured: { admin?: string | undefined; users: Record<string, string> },
  users: readonly string[],
): BoardTokens {
  const path = join(dataDir, TOKENS_FILE);
  let stored: BoardTokens | undefined;
  let text: string | undefined;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') {
      throw new CliError('CLI_CONFIG', `cannot read ${path}`, { cause: error });
    }
  }
  if (text !== undefined) {
    try {
      stored = fileShape.parse(JSON.parse(text));
    } catch (error) {
      throw new CliError('CLI_CONFIG', `${path} is damaged; delete it to generate new tokens`, {
        cause: error,
      });
    }
  }
  const { tokens, changed } = mergeTokens(stored, configured, users);
  if (changed) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(path, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 });
  }
  return tokens;
}
