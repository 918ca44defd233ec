/**
 * Board protocol v1's names and codes (docs/board-protocol.md), apart from
 * its zod schemas (boardProtocol.ts, which re-exports them) so the page's
 * script can import them without bundling zod.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */

/** The protocol version a client names in `subscribe`. */
export const PROTOCOL_VERSION = 1;

/** The WebSocket subprotocol the server selects. */
export const SUBPROTOCOL = 'roundtable.board.v1';

/**
 * Prefix of the subprotocol that carries the bearer token, for clients that
 * cannot set headers (browsers): `roundtable.bearer.<token>`.
 */
export const BEARER_SUBPROTOCOL_PREFIX = 'roundtable.bearer.';

/** Close codes the server uses, beyond the standard ones (1001, 1009). */
export const CLOSE_CODES = {
  /** Server shutting down; reconnect elsewhere or later. */
  goingAway: 1001,
  /** A frame exceeded `maxPayload` (sent by ws itself). */
  tooBig: 1009,
  /** The client kept sending after being told it was rate limited. */
  flood: 4029,
} as const;

/** Codes of `error` frames; the connection stays open after each one. */
export const ERROR_CODES = [
  'bad_json',
  'bad_frame',
  'unknown_type',
  'unsupported_version',
  'rate_limited',
] as const;

/** A code of an `error` frame. */
export type ErrorCode = (typeof ERROR_CODES)[number];
