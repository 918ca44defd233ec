/**
 * Board protocol v1, the frames both sides exchange, as zod schemas. The
 * server validates every inbound frame with them; the client reads every
 * frame it receives with serverFrameCheck.ts, which a property test holds to
 * {@link serverFrameSchema}. Documented in docs/board-protocol.md; change
 * both together. The names and codes are in boardProtocolConstants.ts
 * (re-exported here), which the page's script imports without zod.
 */
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import type { BoardCard } from './boardPort.js';
import { ERROR_CODES, PROTOCOL_VERSION } from './boardProtocolConstants.js';
import { type BoardWindow, MAX_RANGE_LIMIT, MAX_WATCH } from './boardWindow.js';

// zod/mini, not zod: zod's full build was 454 KB of the page's 563 KB script
// when the page bundled this file (docs/board.md); it now reads server frames
// with serverFrameCheck.ts and bundles no zod. English messages, as the full
// build gives.
z.config(en());

export {
  BEARER_SUBPROTOCOL_PREFIX,
  CLOSE_CODES,
  ERROR_CODES,
  type ErrorCode,
  PROTOCOL_VERSION,
  SUBPROTOCOL,
} from './boardProtocolConstants.js';

const iso = z.string().check(z.minLength(1));

/** A queued card's user at their cap (boardCard.ts `UserAtCap`); null: not at cap. */
const atCapSchema = z.nullable(z.object({ running: z.int(), max: z.int() }));

/** Schema of a card; checked against {@link BoardCard} at compile time below. */
export const boardCardSchema = z.object({
  taskId: z.string(),
  userId: z.string(),
  title: z.string(),
  column: z.enum(['queued', 'running', 'done', 'failed']),
  sessionId: z.string(),
  attempt: z.int(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  queued: z.nullable(z.object({ position: z.int(), since: iso, atCap: z.optional(atCapSchema) })),
  running: z.nullable(z.object({ since: iso, until: z.optional(z.nullable(iso)) })),
  failure: z.nullable(z.object({ reason: z.string(), recoverable: z.boolean() })),
  exitCode: z.nullable(z.int()),
  lastOutput: z.array(z.string()),
  updatedAt: iso,
  previous: z.optional(z.nullable(z.object({ attempt: z.int(), reason: z.string() }))),
  timeLimitMs: z.optional(z.nullable(z.int())),
});

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const cardSchemaMatchesPort: Same<z.infer<typeof boardCardSchema>, BoardCard> = true;
void cardSchemaMatchesPort;

const rangeSchema = z.strictObject({
  offset: z.int().check(z.nonnegative(), z.maximum(10_000_000)),
  limit: z.int().check(z.nonnegative(), z.maximum(MAX_RANGE_LIMIT)),
});

/** What a subscriber shows (src/board/boardWindow.ts); every field bounded. */
export const windowSchema = z.strictObject({
  filter: z.optional(
    z.strictObject({
      // A user id is 1-128 characters (src/db/inputs.ts `name`): any user the
      // view holds can be named.
      user: z.optional(z.string().check(z.maxLength(128))),
      status: z.optional(z.enum(['', 'queued', 'running', 'succeeded', 'failed', 'cancelled'])),
      text: z.optional(z.string().check(z.maxLength(200))),
    }),
  ),
  columns: z.optional(
    z.strictObject({
      queued: z.optional(rangeSchema),
      running: z.optional(rangeSchema),
      done: z.optional(rangeSchema),
      failed: z.optional(rangeSchema),
    }),
  ),
  watch: z.optional(
    z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(MAX_WATCH)),
  ),
});

const windowSchemaMatches: Same<z.infer<typeof windowSchema>, BoardWindow> = true;
void windowSchemaMatches;

const countsSchema = z.object({
  queued: z.int(),
  running: z.int(),
  done: z.int(),
  failed: z.int(),
});

/** Client to server. */
export const clientFrameSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('subscribe'),
    v: z.int(),
    window: z.optional(windowSchema),
  }),
  z.strictObject({ type: z.literal('ping'), id: z.string().check(z.maxLength(64)) }),
]);

/** A frame a client sends. */
export type ClientFrame = z.infer<typeof clientFrameSchema>;

/** The client frame types the server knows; anything else is `unknown_type`. */
export const CLIENT_FRAME_TYPES: readonly string[] = ['subscribe', 'ping'];

/** Server to client. */
export const serverFrameSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('hello'),
    v: z.literal(PROTOCOL_VERSION),
    userId: z.nullable(z.string()),
    heartbeatMs: z.number(),
  }),
  z.object({
    type: z.literal('snapshot'),
    epoch: z.string(),
    seq: z.int(),
    counts: countsSchema,
    /** Users with cards in the view (the admin's user filter offers them). */
    users: z.array(z.string()),
    cards: z.array(boardCardSchema),
  }),
  z.object({
    type: z.literal('update'),
    seq: z.int(),
    counts: z.optional(countsSchema),
    users: z.optional(z.array(z.string())),
    cards: z.array(boardCardSchema),
    /**
     * Queued cards of the window whose position moved and nothing else
     * (the line moved): task id to its new `queued.position`.
     */
    positions: z.optional(z.record(z.string(), z.int())),
    /**
     * Queued cards of the window whose user's at-cap state moved (a run of
     * theirs ended or was granted, their cap changed): task id to its new
     * `queued.atCap`, the rest of the card kept.
     */
    atCap: z.optional(z.record(z.string(), atCapSchema)),
    removed: z.array(z.string()),
  }),
  z.object({ type: z.literal('pong'), id: z.string() }),
  z.object({ type: z.literal('error'), code: z.enum(ERROR_CODES), message: z.string() }),
]);

/** A frame the server sends. */
export type ServerFrame = z.infer<typeof serverFrameSchema>;
