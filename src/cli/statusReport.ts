/**
 * What `roundtable status` shows: the line and the runners, in total and per
 * user, counted from the session rows (read here, or, when a node holds the
 * PGlite directory, by that node from the same rows with the same queries).
 */
import { type Db, type LineStatusRows, readLineStatus } from '../db/index.js';

export interface UserStatus {
  userId: string;
  queued: number;
  running: number;
  /** The user's cap: an override, or the default. */
  cap: number;
  /** Finished sessions by outcome; null when the source does not know. */
  succeeded: number | null;
  failed: number | null;
  cancelled: number | null;
}

/** One session at the head of the line. */
export interface LineEntry {
  position: number;
  userId: string;
  taskId: string;
  title: string;
  attempt: number;
  /** ISO-8601 UTC. */
  since: string;
}

export interface StatusReport {
  source: string;
  maxRunning: number;
  /**
   * Where `maxRunning` and the users' default caps come from: `nodes`, the
   * caps the nodes' ticks enforce; `settings`, this command's own, since no
   * node has ticked on this store yet (absent: `settings`).
   */
  capsFrom?: 'nodes' | 'settings';
  queued: number;
  running: number;
  users: UserStatus[];
  /** The first sessions in line, in the order the ticks grant them (empty when the source does not know). */
  head: LineEntry[];
}

/** How many of the line `status` lists. */
export const HEAD_SIZE = 5;

type Counts = Omit<UserStatus, 'userId' | 'cap'>;

/**
 * Folds `(user, status, count)` rows into a report. Pure.
 *
 * @example
 * ```ts
 * const rows = [{ userId: 'bo', status: 'running', n: 1 }, { userId: 'ann', status: 'queued', n: 2 }, { userId: 'ann', status: 'failed', n: 1 }]
 * const r = summarize('rows', rows, new Map([['ann', 5]]), { maxRunning: 4, defaultUserCap: 2 })
 * [r.queued, r.running] // => [2, 1]
 * r.users.map((u) => [u.userId, u.cap, u.queued, u.failed]) // => [['ann', 5, 2, 1], ['bo', 2, 0, 0]]
 * ```
 */
export function summarize(
  source: string,
  rows: ReadonlyArray<{ userId: string; status: string; n: number }>,
  caps: ReadonlyMap<string, number>,
  defaults: { maxRunning: number; defaultUserCap: number },
): StatusReport {
  const users = new Map<string, Counts>();
  for (const row of rows) {
    const c = users.get(row.userId) ?? {
      queued: 0,
      running: 0,
      succeeded: 0,
      failed: 0,
      cancelled: 0,
    };
    if (row.status in c)
      c[row.status as keyof Counts] = (c[row.status as keyof Counts] ?? 0) + row.n;
    users.set(row.userId, c);
  }
  const list = [...users.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([userId, c]) => ({ userId, ...c, cap: caps.get(userId) ?? defaults.defaultUserCap }));
  return {
    source,
    maxRunning: defaults.maxRunning,
    queued: list.reduce((n, u) => n + u.queued, 0),
    running: list.reduce((n, u) => n + u.running, 0),
    users: list,
    head: [],
  };
}

/**
 * The report from the rows `readLineStatus` reads (here, or by a running
 * node). The caps shown are those the ticks enforce, from the rows; this
 * process's own configuration (`configured`) only stands in before the first
 * tick, since `status` is often run with none of the nodes' flags. Pure.
 *
 * @example
 * ```ts
 * const rows = { counts: [{ userId: 'ann', status: 'queued', n: 1 }], caps: [], enforced: { globalCap: 2, defaultUserCap: 1 }, head: [] }
 * const r = fromLineStatus('rows', rows, { maxRunning: 4, defaultUserCap: 2 })
 * [r.maxRunning, r.users[0]?.cap, r.capsFrom] // => [2, 1, 'nodes']
 * const before = fromLineStatus('rows', { ...rows, enforced: null }, { maxRunning: 4, defaultUserCap: 2 })
 * [before.maxRunning, before.capsFrom] // => [4, 'settings']
 * ```
 */
export function fromLineStatus(
  source: string,
  rows: LineStatusRows,
  configured: { maxRunning: number; defaultUserCap: number },
): StatusReport {
  const caps = new Map(rows.caps.map((c) => [c.userId, c.maxRunning]));
  const defaults =
    rows.enforced == null
      ? configured
      : { maxRunning: rows.enforced.globalCap, defaultUserCap: rows.enforced.defaultUserCap };
  return {
    ...summarize(source, rows.counts, caps, defaults),
    capsFrom: rows.enforced == null ? 'settings' : 'nodes',
    head: rows.head.map((r, i) => ({ position: i + 1, ...r })),
  };
}

/** Counts sessions by user and status from the rows. */
export async function readStatus(
  db: Db,
  source: string,
  defaults: { maxRunning: number; defaultUserCap: number },
): Promise<StatusReport> {
  return fromLineStatus(source, await readLineStatus(db, HEAD_SIZE), defaults);
}

/**
 * The report as a table.
 *
 * @example
 * ```ts
 * const head = [{ position: 1, userId: 'ann', taskId: 'tsk_1', title: 'fix it', attempt: 2, since: '2026-01-01T00:00:00.000Z' }]
 * const r = { source: 'rows', maxRunning: 4, capsFrom: 'nodes', queued: 2, running: 1, users: [{ userId: 'ann', queued: 2, running: 1, cap: 2, succeeded: null, failed: 0, cancelled: 0 }], head }
 * formatStatus(r).split('\n').slice(0, 4) // => ['source: rows', 'line: 2 waiting, 1 of 4 runners held', '', 'user  waiting  running  cap  succeeded  failed  cancelled']
 * formatStatus(r).split('\n')[4] // => 'ann         2        1    2          -       0          0'
 * formatStatus(r).split('\n').slice(5) // => ['', 'next in line:', '  1. ann  fix it  (tsk_1, attempt 2, since 2026-01-01T00:00:00.000Z)']
 * formatStatus({ ...r, capsFrom: 'settings' }).split('\n')[1] // => 'line: 2 waiting, 1 of 4 runners held (caps: this command’s settings, no node has run here yet)'
 * ```
 */
export function formatStatus(report: StatusReport): string {
  const header = ['user', 'waiting', 'running', 'cap', 'succeeded', 'failed', 'cancelled'];
  const show = (n: number | null) => (n === null ? '-' : String(n));
  const rows = report.users.map((u) => [
    u.userId,
    show(u.queued),
    show(u.running),
    show(u.cap),
    show(u.succeeded),
    show(u.failed),
    show(u.cancelled),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ');
  return [
    `source: ${report.source}`,
    `line: ${report.queued} waiting, ${report.running} of ${report.maxRunning} runners held` +
      (report.capsFrom === 'nodes'
        ? ''
        : ' (caps: this command’s settings, no node has run here yet)'),
    '',
    line(header),
    ...(rows.length === 0 ? ['(no sessions yet)'] : rows.map(line)),
    ...(report.head.length === 0
      ? []
      : [
          '',
          'next in line:',
          ...report.head.map(
            (e) =>
              `  ${e.position}. ${e.userId}  ${e.title}  (${e.taskId}, attempt ${e.attempt}, since ${e.since})`,
          ),
        ]),
  ].join('\n');
}
