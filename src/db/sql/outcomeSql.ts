/**
 * SQL fragments shared by the phases of `rt_tick`: the small outcome
 * records each phase appends to `v_out` (rendered once at the end, with the
 * final rows and positions).
 */

/** `applied`: the session id and whether the op touched the card (its task row is returned). */
export const A = (sid: string, task: string) =>
  `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'a', 'sid', ${sid}, 'tk', ${task})`;
/** `stale`: the status and epoch found instead. */
export const STALE = (status: string, epoch: string) =>
  `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 's', 'st', ${status}, 'ep', ${epoch})`;
/** `not_found`. */
export const NF = `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'n')`;

/**
 * One row of `table` by its primary key `id`, for `LEFT JOIN LATERAL ... ON
 * true`. The tick's statements run on generic plans made once per
 * connection, often on empty tables; a plain `LEFT JOIN table ON id = ...`
 * planned there may become a full index scan filtered afterwards, which then
 * reads the whole table on every tick. A lateral subquery with a LIMIT cannot
 * be pulled up into such a join: it is always one index probe per outer row
 * (test/db/tick.plans.test.ts).
 */
export const byKey = (table: string, key: string, column = 'id') =>
  `(SELECT * FROM ${table} k WHERE k.${column} = ${key} LIMIT 1)`;
