/**
 * `tick(db, input)`: one dispatch tick (the contract: src/db/tickTypes.ts),
 * one statement and one commit. The input is validated before any SQL
 * (src/db/tickInput.ts); `rt_tick` (src/db/sql/rtTick.ts) applies every op
 * and the grants under the dispatch lock; the reply is parsed with the lean
 * row checks of src/db/tickReply.ts, a reply that breaks them is a
 * `CorruptRowError`.
 */
import { sql } from 'kysely';
import { CorruptRowError } from './errors.js';
import { tickPayload } from './tickInput.js';
import {
  arrayOf,
  changesFromJson,
  lineFromJson,
  pairsFromJson,
  sessionFromJson,
  taskFromJson,
} from './tickReply.js';
import type { TickInput, TickOutcome, TickResult } from './tickTypes.js';
import { limitOfPair } from './timeLimit.js';
import type { Db } from './transaction.js';

type Row = Record<string, unknown>;

function corrupt(field: string): never {
  throw new CorruptRowError('rt_tick', '(reply)', field);
}

function asObject(v: unknown, field: string): Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Row) : corrupt(field);
}

function count(v: unknown, field: string): number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : corrupt(field);
}

function position(v: unknown, field: string): number | null {
  return v === null || v === undefined ? null : count(v, field);
}

function outcomeFromJson(v: unknown, n: number, what: string): TickOutcome {
  const o = asObject(v, `${what}.${n}`);
  const ref = typeof o.ref === 'string' ? o.ref : corrupt(`${what}.${n}.ref`);
  switch (o.kind) {
    case 'applied': {
      const out: TickOutcome = {
        ref,
        kind: 'applied',
        session: sessionFromJson(o.session),
        task: o.task === null ? null : taskFromJson(o.task, limitOfPair(o)),
        position: position(o.position, `${what}.${n}.position`),
      };
      if (o.replayed === true) out.replayed = true;
      if (o.next !== null && o.next !== undefined) {
        const next = asObject(o.next, `${what}.${n}.next`);
        out.next = {
          session: sessionFromJson(next.session),
          position: count(next.position, `${what}.${n}.next.position`),
        };
      }
      return out;
    }
    case 'stale': {
      const a = asObject(o.actual, `${what}.${n}.actual`);
      const status = typeof a.status === 'string' ? a.status : corrupt(`${what}.${n}.actual`);
      return { ref, kind: 'stale', actual: { status, epoch: count(a.epoch, `${what}.${n}`) } };
    }
    case 'not_found':
      return { ref, kind: 'not_found' };
    case 'cap':
      return { ref, kind: 'cap', line: lineFromJson(o.line) };
    default:
      return corrupt(`${what}.${n}.kind`);
  }
}

/**
 * The outcomes of a reply. A finish whose handle was folded into it and
 * applied with it names the handle's ref (`handle`): that op's outcome is
 * the same session, applied (src/db/tickInput.ts `foldHandles`).
 */
function outcomesFromJson(v: unknown, what: string): TickOutcome[] {
  const list = arrayOf(v, what, (x) => x);
  const out: TickOutcome[] = [];
  list.forEach((x, n) => {
    const o = outcomeFromJson(x, n, what);
    out.push(o);
    const handle = (x as Row).handle;
    if (handle === null || handle === undefined) return;
    if (typeof handle !== 'string' || o.kind !== 'applied') corrupt(`${what}.${n}.handle`);
    out.push({ ref: handle, kind: 'applied', session: o.session, task: null, position: null });
  });
  return out;
}

/** Parses `rt_tick`'s reply. Exported for the benchmark (parse cost per job). */
export function parseTickReply(reply: unknown): TickResult {
  const r = asObject(reply, '(reply)');
  const result: TickResult = {
    tick: count(r.tick, 'tick'),
    changed: r.changed === true,
    // Finishes answered as their phase ended (asked for with `finished`) come apart.
    outcomes:
      r.finished === null || r.finished === undefined
        ? outcomesFromJson(r.outcomes, 'outcomes')
        : [
            ...outcomesFromJson(r.outcomes, 'outcomes'),
            ...outcomesFromJson(r.finished, 'finished'),
          ],
    granted: pairsFromJson(r.granted, 'granted'),
    running: count(r.running, 'running'),
    lines: arrayOf(r.lines, 'lines', lineFromJson),
  };
  if (r.owned !== null && r.owned !== undefined) result.owned = pairsFromJson(r.owned, 'owned');
  if (r.changes !== null && r.changes !== undefined)
    result.changes = changesFromJson(r.changes, 'changes');
  if (r.changes_deferred === true) result.changesDeferred = true;
  else if (r.changes_deferred !== null && r.changes_deferred !== undefined)
    corrupt('changes_deferred');
  return result;
}

/**
 * Applies one tick: every op in the contract's order, then up to `want`
 * grants to `owner`, in one commit. Throws `ValidationError` (naming
 * `ops.<index>.<field>`) before any SQL for a bad input; a lost
 * compare-and-set or an unknown id is an outcome, never an error.
 */
export async function tick(db: Db, input: TickInput): Promise<TickResult> {
  const payload = tickPayload(input);
  const { rows } = await sql<{
    r: unknown;
  }>`SELECT rt_tick(${JSON.stringify(payload)}::jsonb) AS r`.execute(db);
  const result = parseTickReply(rows[0]?.r);
  // In op order, as one list: a finish answered early and a folded handle come apart.
  const order = new Map(input.ops.map((op, i) => [op.ref, i]));
  result.outcomes.sort((a, b) => (order.get(a.ref) ?? 0) - (order.get(b.ref) ?? 0));
  return result;
}
