/**
 * SQL fragments shared by the phases of `rt_tick`: the small outcome
 * records each phase appends to `v_out` (rendered once at the end, with the
 * final rows and positions).
 */

/** `applied`: the session id and whether the op touched the card (its task row is returned). */
export const A = (sid: string, task: string) =>
  `jsonb_build_object('o', x.ord, 'r', x.ref, 'k', 'a', 'sid', ${sid}, 'tk', ${task})`;
/**
 * `applied` for an enqueue whose key named a task submitted before
 * (rtTickAppend.ts): that task's latest attempt `sid`, with its task,
 * marked replayed. Of the enqueue row `q`.
 */
export const REPLAYED = (sid: string) =>
  `jsonb_build_object('o', q.ord, 'r', q.ref, 'k', 'a', 'sid', ${sid}, 'tk', true, 'rp', true)`;
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

/**
 * `v_ops := opsBySession(...)` makes a map of a tick's ops of one kind: each
 * op (a jsonb array's records of `columns`, where `where`; the first of a
 * session in op order) by its session id. The update of those sessions then
 * finds its rows by key (`s.id = ANY (${SESSIONS_OF_OPS})`) and reads each
 * row's op from the map (`opOf`), with no join to the set of ops: the
 * tick's joins are nested loops (hash and merge joins are off, see
 * `byKey`), so a join to the set read all of it for every row, quadratic
 * in the ops (one tick of 500 finishes: its sessions update 62 ms, 249,500
 * rows removed by the join filter). A map lookup is a binary search. The
 * compare-and-set stays in the update's WHERE, on the row: a row another
 * transaction changed meanwhile is checked again on its newest version.
 */
export const opsBySession = (ops: string, columns: string, where = 'true') =>
  `(SELECT coalesce(jsonb_object_agg(y.session_id, to_jsonb(y)), '{}') FROM (
      SELECT DISTINCT ON (x.session_id) x.* FROM jsonb_to_recordset(${ops}) AS x(${columns})
      WHERE ${where} ORDER BY x.session_id, x.ord) y)`;

/** The session ids of the map `v_ops` (`opsBySession`), for `s.id = ANY (...)`. */
export const SESSIONS_OF_OPS = 'ARRAY(SELECT jsonb_object_keys(v_ops))';

/** Field `field` of the op the map `v_ops` holds for the session row `s`, as `type`. */
export const opOf = (field: string, type = 'text') => `(v_ops -> s.id ->> '${field}')::${type}`;
