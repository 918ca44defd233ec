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

/**
 * What `tokens.json` holds: the tokens the node accepts (`admin`, `users`),
 * and under `dropped` the tokens of users no longer configured. Those no
 * longer authenticate anywhere (the board, its WebSocket, /metrics, the CLI
 * through the node); they are kept so that configuring the user again gives
 * back the same URL.
 */
export interface StoredTokens extends BoardTokens {
  dropped?: Record<string, string>;
}

const TOKEN = /^[A-Za-z0-9._~-]{16,256}$/;
const fileShape = z.object({
  admin: z.string().regex(TOKEN),
  users: z.record(z.string(), z.string().regex(TOKEN)),
  dropped: z.record(z.string(), z.string().regex(TOKEN)).optional(),
});

export const TOKENS_FILE = 'tokens.json';

/** A new random token (32 base64url characters: 192 bits). */
export function newToken(): string {
  return randomBytes(24).toString('base64url');
}

/** The tokens a start decided: what the node accepts, what the file keeps, who lost access. */
export interface MergedTokens {
  /** What the node accepts: the admin, and the users configured now. */
  tokens: BoardTokens;
  /** What `tokens.json` should hold. */
  file: StoredTokens;
  /** Whether `file` differs from what was stored (so it must be written). */
  changed: boolean;
  /** Users whose token worked before this start and no longer does: no longer configured. */
  revoked: string[];
}

/**
 * Merges configured tokens over stored ones and fills the gaps. Pure. A
 * user is configured when named in `users` or given a token in
 * `configured.users`; any other user the file knows loses board access
 * (their token moves to `dropped`, and comes back if they are configured
 * again). Their tasks are not touched: work already accepted runs on.
 *
 * @example
 * ```ts
 * const make = () => 'generated-token-000000'
 * mergeTokens({ admin: 'stored-admin-token-0', users: {} }, { users: {} }, ['ann'], make).tokens // => { admin: 'stored-admin-token-0', users: { ann: 'generated-token-000000' } }
 * mergeTokens(undefined, { admin: 'given-admin-token-00', users: {} }, [], make).tokens.admin // => 'given-admin-token-00'
 * mergeTokens(undefined, { users: { ann: 'same-token-00000000', bo: 'same-token-00000000' } }, [], make) // throws CLI_CONFIG
 * const before = { admin: 'stored-admin-token-0', users: { demo: 'demo-token-000000000' } }
 * mergeTokens(before, { users: {} }, ['a'], make).tokens.users // => { a: 'generated-token-000000' }
 * mergeTokens(before, { users: {} }, ['a'], make).revoked // => ['demo']
 * mergeTokens(before, { users: {} }, ['a'], make).file.dropped // => { demo: 'demo-token-000000000' }
 * const later = mergeTokens(before, { users: {} }, ['a'], make).file
 * mergeTokens(later, { users: {} }, ['a', 'demo'], make).tokens.users.demo // => 'demo-token-000000000'
 * ```
 */
export function mergeTokens(
  stored: StoredTokens | undefined,
  configured: { admin?: string | undefined; users: Record<string, string> },
  users: readonly string[],
  make: () => string = newToken,
): MergedTokens {
  const admin = configured.admin ?? stored?.admin ?? make();
  const known: Record<string, string> = { ...stored?.dropped, ...stored?.users };
  const active: Record<string, string> = {};
  for (const user of new Set([...users, ...Object.keys(configured.users)])) {
    active[user] = ownToken(configured.users, user) ?? ownToken(known, user) ?? make();
  }
  const dropped: Record<string, string> = {};
  for (const [user, token] of Object.entries(known)) {
    if (ownToken(active, user) === undefined) dropped[user] = token;
  }
  const seen = new Map<string, string>([[admin, 'the admin']]);
  for (const [user, token] of Object.entries(active)) {
    const other = seen.get(token);
    if (other !== undefined) {
      throw new CliError(
        'CLI_CONFIG',
        `tokens.users.${user}: same token as ${other}; every token must be unique`,
      );
    }
    seen.set(token, user);
  }
  const file: StoredTokens = {
    admin: stored?.admin ?? admin,
    users: active,
    ...(Object.keys(dropped).length > 0 ? { dropped } : {}),
  };
  const revoked = Object.keys(stored?.users ?? {}).filter(
    (user) => ownToken(active, user) === undefined,
  );
  return {
    tokens: { admin, users: active },
    file,
    changed: stored === undefined || !sameTokens(stored, file),
    revoked,
  };
}

/**
 * The token `tokens` holds for `user`, never one its prototype has: a user
 * may be named `constructor` or `toString` (the user-name rule allows it),
 * and `{}.constructor` is a function, which no token is.
 *
 * @example
 * ```ts
 * ownToken({ ann: 'ann-token-000000000' }, 'ann') // => 'ann-token-000000000'
 * ownToken({}, 'constructor') // => undefined
 * ownToken({ constructor: 'ctor-token-00000000' }, 'constructor') // => 'ctor-token-00000000'
 * ```
 */
export function ownToken(
  tokens: Readonly<Record<string, string>>,
  user: string,
): string | undefined {
  return Object.hasOwn(tokens, user) ? tokens[user] : undefined;
}

/** Same owners with the same tokens (key order aside). */
function sameTokens(a: StoredTokens, b: StoredTokens): boolean {
  const same = (x: Record<string, string> = {}, y: Record<string, string> = {}) =>
    Object.keys(x).length === Object.keys(y).length &&
    Object.entries(x).every(([k, v]) => ownToken(y, k) === v);
  return a.admin === b.admin && same(a.users, b.users) && same(a.dropped, b.dropped);
}

/** `<dataDir>/tokens.json` as stored, or undefined when there is none; throws `CLI_CONFIG` when damaged. */
function readStoredTokens(dataDir: string): StoredTokens | undefined {
  const path = join(dataDir, TOKENS_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new CliError('CLI_CONFIG', `cannot read ${path}`, { cause: error });
  }
  try {
    return fileShape.parse(JSON.parse(text));
  } catch (error) {
    throw new CliError('CLI_CONFIG', `${path} is damaged; delete it to generate new tokens`, {
      cause: error,
    });
  }
}

/**
 * For a starting node: reads `<dataDir>/tokens.json`, merges, and writes it
 * back when something changed. `revoked` names the users who lost access.
 */
export function loadBoardTokens(
  dataDir: string,
  configured: { admin?: string | undefined; users: Record<string, string> },
  users: readonly string[],
): { tokens: BoardTokens; revoked: string[] } {
  const { tokens, file, changed, revoked } = mergeTokens(
    readStoredTokens(dataDir),
    configured,
    users,
  );
  if (changed) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, TOKENS_FILE), `${JSON.stringify(file, null, 2)}\n`, {
      mode: 0o600,
    });
  }
  return { tokens, revoked };
}

/**
 * For a command talking to the running node: the tokens that node accepts
 * (the file's, which the node wrote at its start; configured ones win), never
 * a dropped user's. Writes nothing: the node's start decides.
 */
export function readBoardTokens(
  dataDir: string,
  configured: { admin?: string | undefined; users: Record<string, string> },
): BoardTokens {
  const stored = readStoredTokens(dataDir);
  const admin = configured.admin ?? stored?.admin;
  if (admin === undefined) {
    throw new CliError(
      'CLI_CONFIG',
      `${join(dataDir, TOKENS_FILE)} is missing: the running node's tokens are unknown`,
    );
  }
  return { admin, users: { ...stored?.users, ...configured.users } };
}
