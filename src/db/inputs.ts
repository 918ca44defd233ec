/**
 * zod schemas for the repositories' inputs, so every write is checked in one
 * place before any SQL runs, and every failure names its field.
 */
import { z } from 'zod';
import { TITLE_MAX, taskTitle } from '../board/submission.js';
import { isId } from './ids.js';
import { runSpecSchema } from './runSpec.js';

/** Limits on free text columns, documented in docs/data.md. */
export const TEXT_LIMITS = { title: TITLE_MAX, reason: 1000, handle: 255 } as const;

export const now = z.date().refine((d) => Number.isFinite(d.getTime()), 'not a valid Date');
export const taskId = z.string().refine((v) => isId('task', v), 'not a task id');
export const sessionId = z.string().refine((v) => isId('session', v), 'not a session id');
/** User and node names come from elsewhere; we only bound their shape. */
export const name = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}$/, '1-128 of [A-Za-z0-9_.:@-], alphanumeric first');
export const title = taskTitle;
export const column = z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'a lowercase slug of 1-40');
export const kind = z.enum(['run', 'bootstrap']);
export const backend = z.enum(['swarm', 'docker', 'local', 'simulated']);
export const epoch = z.number().int().min(0).max(2_147_483_647);
/** A boot of a node, as rows name it: `${nodeId}@${bootId}`. */
export const bootOwner = z
  .string()
  .min(3)
  .max(256)
  .regex(/^[^@]+@[^@]+$/, 'node@boot');
export const exitCode = z.number().int().min(-2_147_483_648).max(2_147_483_647);
export const reason = z.string().min(1).max(TEXT_LIMITS.reason);
export const handle = z
  .string()
  // `:` (and `@`, an older form) for the local backend's handles (`rt-<session>:<pid>.<start>.<boot>[@<dir, base64url>]`, src/containers/local/localHandle.ts).
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.:@-]*$/, 'a container, service or process name')
  .max(TEXT_LIMITS.handle);
export const maxRunning = z.number().int().min(0).max(100_000);
/** A dispatch tick's number (`dispatch_state.tick`). */
export const tickNumber = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** How much of a stored output's end a feed read or a tick's reply brings. */
export const tailChars = z.number().int().min(1).max(1_000_000);
/** Ticks whose changes a reader has already (its own ticks' replies): at most 10,000. */
export const skipTicks = z.array(tickNumber).max(10_000);
/** Most changed sessions a tick's reply may carry (src/db/tickTypes.ts `changesMax`). */
export const changesMax = z.number().int().min(0).max(100_000);
export const spec = runSpecSchema;
/** A caller's idempotency key for a submission, unique per user while its task is kept. */
export { submitKey } from '../board/submitKey.js';
export { timeLimitMs } from '../board/timeLimit.js';
