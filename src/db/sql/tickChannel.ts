/**
 * The NOTIFY channel of the dispatch state. A tick that changed anything
 * sends `<tick> <owner> grantable|full` on it (whether a grant is still
 * possible after that tick; docs/data.md says who is told of which), and a
 * repair pass sends `<tick>` alone.
 */
export const TICK_CHANNEL = 'roundtable_tick';
