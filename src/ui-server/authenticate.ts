/**
 * Bearer-token authentication for HTTP requests and WebSocket upgrades.
 * Tokens are compared in constant time: every configured token is compared,
 * through fixed-length digests, whatever matches first.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BEARER_SUBPROTOCOL_PREFIX } from '../board/boardProtocol.js';
import type { UiServerTokens } from './uiServerOptions.js';

/** Who is calling: a user, or the admin who sees every user. */
export type Principal = { kind: 'user'; userId: string } | { kind: 'admin' };

/** The user id a principal reads as: `null` for the admin (all users). */
export function viewerOf(principal: Principal): string | null {
  return principal.kind === 'admin' ? null : principal.userId;
}

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Builds the lookup from the configured tokens. */
export function createAuthenticator(tokens: UiServerTokens): (token: string) => Principal | null {
  const entries: Array<{ digest: Buffer; principal: Principal }> = [
    { digest: digest(tokens.admin), principal: { kind: 'admin' } },
    ...Object.entries(tokens.users).map(([userId, t]) => ({
      digest: digest(t),
      principal: { kind: 'user', userId } as Principal,
    })),
  ];
  return (candidate) => {
    const d = digest(candidate);
    let found: Principal | null = null;
    for (const entry of entries) {
      // No early exit: the time taken does not depend on which token matched.
      if (timingSafeEqual(d, entry.digest) && found === null) found = entry.principal;
    }
    return found;
  };
}

/**
 * The token a request carries: `Authorization: Bearer <token>`, or, on an
 * upgrade (browsers cannot set headers), a `roundtable.bearer.<token>`
 * WebSocket subprotocol.
 */
export function tokenOf(req: IncomingMessage): string | null {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return match ? match[1]! : null; // the group is not optional
  }
  const protocols = req.headers['sec-websocket-protocol'];
  if (protocols === undefined) return null;
  for (const p of protocols.split(',')) {
    const trimmed = p.trim();
    if (trimmed.startsWith(BEARER_SUBPROTOCOL_PREFIX)) {
      return trimmed.slice(BEARER_SUBPROTOCOL_PREFIX.length);
    }
  }
  return null;
}
