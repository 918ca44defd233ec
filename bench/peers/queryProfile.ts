/**
 * Where a worker's writes go: counts every statement a worker process sends
 * through `pg` (all three systems use it), by kind and table, and the
 * transactions that wrote something (each one is a commit the server must
 * flush). The server has no pg_stat_statements preloaded, so the count is
 * taken on the client side by wrapping `pg.Client.prototype.query` once per
 * process; a wrapped call costs a regex and a map update.
 */
import { createRequire } from 'node:module';
import pg from 'pg';

export interface QueryProfile {
  /** Statements by label (`insert sessions`, `select from tasks`, `begin`...). */
  statements: Record<string, number>;
  /** Statements by their text (whitespace collapsed, cut to 160 characters). */
  shapes: Record<string, number>;
  /** Transactions (explicit, or one autocommit statement) with at least one write. */
  writeTransactions: number;
  /** Transactions that only read. */
  readTransactions: number;
}

const WRITE = /^(insert|update|delete|merge)\b/;
/** Functions that write (roundtable's tick and repair): a call is a write transaction. */
const WRITE_FUNCTIONS = new Set(['select rt_tick', 'select rt_repair']);

/**
 * A short label for a statement.
 *
 * @example
 * ```ts
 * labelOf('insert into "sessions" ("id") values ($1)') // => 'insert sessions'
 * labelOf('update pgboss.job set state = $1') // => 'update pgboss.job'
 * labelOf('select "s".* from "sessions" as "s" where ...') // => 'select from sessions'
 * labelOf('select pg_advisory_xact_lock($1)') // => 'select pg_advisory_xact_lock'
 * labelOf('SELECT rt_tick($1::jsonb) AS r') // => 'select rt_tick'
 * labelOf('BEGIN') // => 'begin'
 * ```
 */
export function labelOf(sql: string): string {
  const s = sql.trim().toLowerCase().replace(/\s+/g, ' ');
  const word = /^\w+/.exec(s)?.[0] ?? '?';
  const ident = '"?([\\w.]+)"?(?:\\."?(\\w+)"?)?';
  const table = (re: string): string => {
    const m = new RegExp(re + ident).exec(s);
    return m === null ? '?' : m[2] === undefined ? (m[1] ?? '?') : `${m[1]}.${m[2]}`;
  };
  switch (word) {
    case 'insert':
      return `insert ${table('^insert into ')}`;
    case 'update':
      return `update ${table('^update ')}`;
    case 'delete':
      return `delete ${table('^delete from ')}`;
    case 'select': {
      const fn = /^select (pg_\w+|rt_\w+|\w+\.\w+)\(/.exec(s);
      if (fn !== null) return `select ${fn[1]}`;
      return / from /.test(s) ? `select from ${table(' from ')}` : 'select';
    }
    case 'with':
      return `with ... ${/\b(insert|update|delete)\b/.exec(s)?.[1] ?? 'select'}`;
    default:
      return word;
  }
}

interface TxState {
  open: boolean;
  wrote: boolean;
}

const profile: QueryProfile = {
  statements: {},
  shapes: {},
  writeTransactions: 0,
  readTransactions: 0,
};
const tx = new WeakMap<object, TxState>();
let installed = false;

function count(client: object, text: string): void {
  const label = labelOf(text);
  profile.statements[label] = (profile.statements[label] ?? 0) + 1;
  const shape = text.trim().replace(/\s+/g, ' ').slice(0, 160);
  profile.shapes[shape] = (profile.shapes[shape] ?? 0) + 1;
  const state = tx.get(client) ?? { open: false, wrote: false };
  tx.set(client, state);
  const isWrite =
    WRITE.test(label) ||
    WRITE_FUNCTIONS.has(label) ||
    (label.startsWith('with') && !label.endsWith('select'));
  if (label === 'begin' || label === 'start') {
    state.open = true;
    state.wrote = false;
  } else if (label === 'commit' || label === 'rollback' || label === 'end') {
    if (state.wrote) profile.writeTransactions++;
    else profile.readTransactions++;
    state.open = false;
  } else if (state.open) {
    if (isWrite) state.wrote = true;
  } else if (isWrite) {
    profile.writeTransactions++;
  } else {
    profile.readTransactions++;
  }
}

/**
 * Every copy of `pg` a worker may use: this folder's (the peers' own
 * node_modules, which graphile-worker and pg-boss bring) and the project's
 * (roundtable's src/db). They are two modules with two `Client` prototypes:
 * wrapping only the first left roundtable's profile empty.
 */
function pgCopies(): (typeof pg)[] {
  const copies = new Set<typeof pg>([pg]);
  try {
    copies.add(createRequire(new URL('../../package.json', import.meta.url))('pg') as typeof pg);
  } catch {
    // No project copy (the bench run from elsewhere): this folder's is the one.
  }
  return [...copies];
}

/** Starts counting in this process (idempotent). */
export function installQueryProfile(): void {
  if (installed) return;
  installed = true;
  for (const copy of pgCopies()) wrap(copy);
}

function wrap(copy: typeof pg): void {
  const proto = copy.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: object, ...args: unknown[]) {
    const first = args[0];
    const text =
      typeof first === 'string'
        ? first
        : typeof first === 'object' && first !== null && 'text' in first
          ? String((first as { text: unknown }).text)
          : undefined;
    if (text !== undefined) count(this, text);
    return original.apply(this, args);
  };
}

/** What was counted since `installQueryProfile`. */
export function queryProfile(): QueryProfile {
  return structuredClone(profile);
}

/** Sums profiles (the processes of one worker). */
export function mergeProfiles(profiles: readonly QueryProfile[]): QueryProfile {
  const out: QueryProfile = {
    statements: {},
    shapes: {},
    writeTransactions: 0,
    readTransactions: 0,
  };
  for (const p of profiles) {
    for (const [k, n] of Object.entries(p.statements))
      out.statements[k] = (out.statements[k] ?? 0) + n;
    for (const [k, n] of Object.entries(p.shapes)) out.shapes[k] = (out.shapes[k] ?? 0) + n;
    out.writeTransactions += p.writeTransactions;
    out.readTransactions += p.readTransactions;
  }
  return out;
}
