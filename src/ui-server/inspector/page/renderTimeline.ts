/// <reference lib="dom" />
/**
 * The system events, newest first, filtered by actor (a substring of the
 * subject, its sessionId or the job it runs) and by kind; alarms only on
 * request. The filter is pure (tested in Node); the page draws its rows.
 */
import type { ActorJob } from '../inspectorProtocol.js';
import type { TimelineEntry } from '../timeline.js';

export interface TimelineFilter {
  /** Case-insensitive substring of the subject, sessionId or job title/user; '' for all. */
  actor: string;
  /** A `TimelineKind`, or '' for every kind. */
  kind: string;
  alarmsOnly: boolean;
}

/**
 * The entries that pass `f`, in their order.
 *
 * @example
 * ```ts
 * const t = [
 *   { at: 1, kind: 'start', subject: 'root/pool', sessionId: 'x:1', text: 'started', alarm: false },
 *   { at: 2, kind: 'exit', subject: 'runners/s-9', sessionId: 'x:2', text: 'error: boom', alarm: true },
 * ]
 * filterTimeline(t, { actor: 'POOL', kind: '', alarmsOnly: false }).map((e) => e.at) // => [1]
 * filterTimeline(t, { actor: '', kind: 'exit', alarmsOnly: false }).map((e) => e.at) // => [2]
 * filterTimeline(t, { actor: '', kind: '', alarmsOnly: true }).map((e) => e.at) // => [2]
 * filterTimeline(t, { actor: 'alice', kind: '', alarmsOnly: false }, () => ({ taskId: 't', title: 'build', userId: 'alice' })).length // => 2
 * ```
 */
export function filterTimeline(
  entries: readonly TimelineEntry[],
  f: TimelineFilter,
  jobOf: (sessionId: string) => ActorJob | null = () => null,
): TimelineEntry[] {
  const needle = f.actor.trim().toLowerCase();
  return entries.filter((e) => {
    if (f.kind !== '' && e.kind !== f.kind) return false;
    if (f.alarmsOnly && !e.alarm) return false;
    if (needle === '') return true;
    const job = e.sessionId === null ? null : jobOf(e.sessionId);
    const hay = [e.subject, e.sessionId ?? '', job?.title ?? '', job?.userId ?? '']
      .join('\n')
      .toLowerCase();
    return hay.includes(needle);
  });
}

/**
 * The UTC time of day of `at`, to the millisecond: how the page writes when.
 *
 * @example
 * ```ts
 * timeOfDay(Date.parse('2026-11-01T10:00:01.250Z')) // => '10:00:01.250'
 * ```
 */
export const timeOfDay = (at: number): string => new Date(at).toISOString().slice(11, 23);

/** Rows for the timeline table, newest first. */
export function timelineRows(
  entries: readonly TimelineEntry[],
  jobOf: (sessionId: string) => ActorJob | null,
): HTMLTableRowElement[] {
  return [...entries].reverse().map((e) => {
    const tr = document.createElement('tr');
    tr.dataset.kind = e.kind;
    if (e.alarm) tr.className = 'alarm';
    const when = document.createElement('td');
    when.className = 'when';
    when.textContent = timeOfDay(e.at);
    const kind = document.createElement('td');
    kind.className = 'kind';
    kind.textContent = e.kind;
    const what = document.createElement('td');
    const who = document.createElement('span');
    who.className = 'subject';
    who.textContent = e.subject;
    what.append(who);
    const job = e.sessionId === null ? null : jobOf(e.sessionId);
    if (job?.title) {
      const j = document.createElement('span');
      j.className = 'muted';
      j.textContent = ` (${job.title} · ${job.userId})`;
      what.append(j);
    }
    what.append(document.createElement('br'), e.text);
    tr.append(when, kind, what);
    return tr;
  });
}
