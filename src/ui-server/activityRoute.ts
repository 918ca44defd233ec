/**
 * GET /api/admin/activity's query: `minutes` (1 to 1440, default 60) and
 * `at` (an ISO-8601 instant with its offset, default the node's now), and
 * nothing else. A bad or unknown parameter is refused with the field named,
 * before any SQL runs.
 */
import { z } from 'zod';
import type { ActivityQuery } from '../board/boardPort.js';
import { firstIssue } from '../common/firstIssue.js';
import type { RouteRefusal } from './jobRoutes.js';

/** The dashboard's window when the request names none: the last hour. */
export const DEFAULT_ACTIVITY_MINUTES = 60;
/** Longest window: a day of minutes (the store refuses more as well). */
export const MAX_ACTIVITY_MINUTES = 1440;

const activityQuery = z.strictObject({
  minutes: z
    .string()
    .regex(/^\d{1,4}$/, 'a whole number of minutes')
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_ACTIVITY_MINUTES))
    .optional(),
  at: z.iso
    .datetime({ offset: true })
    .transform((s) => new Date(s))
    .optional(),
});

/**
 * The window asked for, or why it is refused.
 *
 * @example
 * ```ts
 * parseActivityQuery(new URLSearchParams('')) // => { minutes: 60 }
 * parseActivityQuery(new URLSearchParams('minutes=5&at=2026-07-14T10:04:30Z')) // => { minutes: 5, at: new Date('2026-07-14T10:04:30Z') }
 * parseActivityQuery(new URLSearchParams('minutes=0')).status // => 400
 * parseActivityQuery(new URLSearchParams('hours=1')).status // => 400
 * ```
 */
export function parseActivityQuery(search: URLSearchParams): ActivityQuery | RouteRefusal {
  const parsed = activityQuery.safeParse(Object.fromEntries(search));
  if (!parsed.success) {
    const { field, message } = firstIssue(parsed.error, 'query');
    // An unknown parameter is named itself: its issue's path is the whole query.
    const issue = parsed.error.issues[0];
    const unknown = issue?.code === 'unrecognized_keys' ? issue.keys[0] : undefined;
    return { status: 400, code: 'bad_request', message: `${unknown ?? field}: ${message}` };
  }
  const { minutes, at } = parsed.data;
  return { minutes: minutes ?? DEFAULT_ACTIVITY_MINUTES, ...(at ? { at } : {}) };
}
