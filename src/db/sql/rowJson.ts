/**
 * How the dispatch functions and the feed's read send a `sessions`, `tasks`
 * or `user_lines` row to the node: as a JSON array of the columns the node
 * reads, in the order below (src/db/tickReply.ts reads them by these
 * lists), instead of `to_json(row)`.
 *
 * Measured on the server (PG 15, 4,700 rows): `to_json` of a sessions row
 * costs ~9.5 µs and 640 bytes, `json_build_array` of its 20 read columns
 * ~3.6 µs and 340 bytes (a composite's JSON looks up every column's type
 * and writes every key, per row); a task 3.1 -> 1.7 µs. A tick's reply
 * carries three or four sessions and three tasks per job, and the node
 * parses every byte of them.
 *
 * An older node sends no `rows: 'array'` in its tick and still gets objects
 * (`to_json`), so nodes of both versions can tick one store.
 */

/** The `sessions` columns the node reads (`Session`, rows.ts), in array order. */
export const SESSION_COLUMNS = [
  'id',
  'task_id',
  'user_id',
  'kind',
  'status',
  'attempt',
  'enqueued_at',
  'claimed_at',
  'backend',
  'handle',
  'owner_node',
  'epoch',
  'started_at',
  'finished_at',
  'exit_code',
  'failure_reason',
  'user_recoverable',
  'updated_at',
  'turn',
  'join_seq',
] as const;

/** The `tasks` columns the node reads (`Task`, rows.ts), in array order. */
export const TASK_COLUMNS = [
  'id',
  'user_id',
  'title',
  'run_spec',
  'board_column',
  'created_at',
  'updated_at',
] as const;

/** The `user_lines` columns the node reads (`UserLine`, tickTypes.ts), in array order. */
export const LINE_COLUMNS = [
  'user_id',
  'head_turn',
  'queued',
  'running',
  'join_seq',
  'max_running',
  'has_override',
] as const;

const arrayOf = (
  fn: 'json' | 'jsonb',
  alias: string,
  columns: readonly string[],
  column: (c: string) => string = (c) => `${alias}.${c}`,
) => `${fn}_build_array(${columns.map(column).join(', ')})`;

/**
 * A row of `alias` as JSON: an array of `columns` when `asArray` (an SQL
 * boolean expression; `'true'` for the node's own reads) holds, else the
 * whole row as an object, for older nodes.
 */
function rowJson(
  fn: 'json' | 'jsonb',
  alias: string,
  columns: readonly string[],
  asArray: string,
  column?: (c: string) => string,
): string {
  if (asArray === 'true') return arrayOf(fn, alias, columns, column);
  return `CASE WHEN ${asArray} THEN ${arrayOf(fn, alias, columns, column)} ELSE to_${fn}(${alias}) END`;
}

/** A sessions row of `alias` as `json` (see rowJson). */
export const sessionJson = (alias: string, asArray: string, fn: 'json' | 'jsonb' = 'json') =>
  rowJson(fn, alias, SESSION_COLUMNS, asArray);
/** A tasks row of `alias` as `json` (see rowJson). */
export const taskJson = (alias: string, asArray: string, fn: 'json' | 'jsonb' = 'json') =>
  rowJson(fn, alias, TASK_COLUMNS, asArray);

/**
 * A tasks row for a change row: as `taskJson`, but as an array its
 * `run_spec` is null unless `withSpec` (an SQL boolean expression) holds.
 * Only a grant's runner reads the spec; the board and the feed never do,
 * and a spec can be ~1 MB (docs/data.md, limits) that every other node
 * would otherwise read again at every status change of the task.
 */
export const taskChangeJson = (alias: string, asArray: string, withSpec: string) =>
  withSpec === 'true'
    ? taskJson(alias, asArray)
    : rowJson('json', alias, TASK_COLUMNS, asArray, (c) =>
        c === 'run_spec'
          ? withSpec === 'false'
            ? 'NULL'
            : `CASE WHEN ${withSpec} THEN ${alias}.run_spec END`
          : `${alias}.${c}`,
      );
/** A user_lines row of `alias` as `json` (see rowJson). */
export const lineJson = (alias: string, asArray: string, fn: 'json' | 'jsonb' = 'json') =>
  rowJson(fn, alias, LINE_COLUMNS, asArray);
