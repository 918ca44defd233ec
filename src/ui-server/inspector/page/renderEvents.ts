/// <reference lib="dom" />
/**
 * The selected actor's latest events, newest first: when, type, who sent
 * it, and the event as JSON. Which events are kept is pure (tested in
 * Node); the page draws the rows.
 */
import type { InspectServerFrame } from '../inspectorProtocol.js';
import { timeOfDay } from './renderTimeline.js';

type EventsFrame = Extract<InspectServerFrame, { type: 'events' }>;
export type EventLine = EventsFrame['events'][number];

/** Most events the page keeps for one actor. */
export const EVENTS_SHOWN = 50;

/**
 * What the page holds after an `events` frame: the frame's events after
 * those it held (all of them anew on `reset`), the newest {@link EVENTS_SHOWN}.
 *
 * @example
 * ```ts
 * const e = (seq) => ({ seq, at: seq, type: 'GO', sourceId: null, event: null })
 * keepEvents([e(1)], { reset: false, events: [e(2)] }).map((x) => x.seq) // => [1, 2]
 * keepEvents([e(1)], { reset: true, events: [e(5)] }).map((x) => x.seq) // => [5]
 * keepEvents(Array.from({ length: 50 }, (_, i) => e(i)), { reset: false, events: [e(50)] })[0].seq // => 1
 * ```
 */
export function keepEvents(
  held: readonly EventLine[],
  f: Pick<EventsFrame, 'reset' | 'events'>,
): EventLine[] {
  return (f.reset ? f.events : [...held, ...f.events]).slice(-EVENTS_SHOWN);
}

/** Rows for the events table, newest first. */
export function eventRows(events: readonly EventLine[]): HTMLTableRowElement[] {
  return [...events].reverse().map((e) => {
    const tr = document.createElement('tr');
    const cells = [
      timeOfDay(e.at),
      e.type,
      e.sourceId ? `from ${e.sourceId}` : '',
      JSON.stringify(e.event),
    ];
    for (const c of cells) {
      const td = document.createElement('td');
      td.textContent = c;
      tr.append(td);
    }
    return tr;
  });
}
