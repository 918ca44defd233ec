/**
 * The board's in-memory index: one card per task (the task and its latest
 * session), loaded from the rows at boot and refreshed, task by task, after
 * every change this node's ticks return and every change of other nodes'
 * ticks the feed reads (src/actors/runtimeFeed.ts). `cards()` must be
 * synchronous (the server stamps a sequence number on a snapshot), hence
 * the cache. A card's shape is src/actors/runtimeBoardCard.ts, how a row
 * reaches it src/actors/runtimeBoardEntries.ts, who is told of it
 * src/actors/runtimeBoardPublish.ts, its reads src/actors/runtimeBoardRows.ts,
 * what the index offers src/actors/runtimeBoardTypes.ts, its line
 * src/actors/runtimeBoardLine.ts.
 *
 * Positions (src/actors/runtimeBoardPositions.ts) are the database's order,
 * the one grants really follow over every node (DESIGN.md rule 4: the board
 * must not promise a place the dispatcher will not honour), computed from
 * the card's turn key and the users' lines (src/actors/lineBook.ts). The board offers them as its
 * `line` (BoardSource.line): a card keeps its key while it waits, so when
 * the lines change (one grant moves every card behind it) the board emits
 * no card; it tells the line's listeners, at most every `pushEveryMs`, and
 * they ask the positions of the cards they show, and whether their users
 * are at their caps (running counts move with the same lines). Only a
 * queued card with no key (a row not yet placed by a tick) is renumbered
 * and emitted by the board itself. `cards()` reads positions live, so a snapshot is never
 * behind the lines.
 *
 * While nobody listens (no subscriber, no line listener), `apply` only
 * holds the rows (src/actors/runtimeBoardBacklog.ts), and every read
 * applies them first: a node whose board nobody watches pays for a task's
 * rows once, when someone looks, instead of for every row of every node.
 */
import { withoutNul } from '../common/wellFormed.js';
import type { Db, Session } from '../db/index.js';
import { pushOutput } from '../machines/outputTail.js';
import { Listeners } from '../supervisor/Listeners.js';
import { BoardBacklog, type HeldRow } from './runtimeBoardBacklog.js';
import { type BoardEntry, byBoardOrder, CARD_OUTPUT, toCard } from './runtimeBoardCard.js';
import { BoardEntries, endedBefore, sameTask } from './runtimeBoardEntries.js';
import { boardLine } from './runtimeBoardLine.js';
import { type BoardPositions, positionsOf } from './runtimeBoardPositions.js';
import { CardPublisher } from './runtimeBoardPublish.js';
import { OutputRestore } from './runtimeBoardRestore.js';
import { readAllCardRows, readCardRows } from './runtimeBoardRows.js';
import type { ApplyOptions, BoardIndex, BoardPushOptions } from './runtimeBoardTypes.js';
import { RuntimeListenerError } from './runtimeListenerError.js';

export { CARD_LINE_CHARS, CARD_OUTPUT_LINES } from './runtimeBoardCard.js';
export type { ApplyOptions, BoardIndex, BoardPushOptions } from './runtimeBoardTypes.js';

/** No options (a shared object: apply is called for every change of a job's row). */
const NO_OPTIONS: ApplyOptions = Object.freeze({});
/** What apply returns when there is nothing to wait for. */
const DONE: Promise<void> = Promise.resolve();

export function createBoardIndex(
  db: Db,
  pool?: BoardPositions,
  push?: BoardPushOptions,
  /** Where a held row's failure (its `apply` was answered already) and a listener's throw go. */
  onError: (error: unknown) => void = (error) => process.emitWarning(error as Error),
): BoardIndex {
  const entries = new BoardEntries((moved) =>
    queueMicrotask(() => {
      reposition(moved);
      publish(moved, true);
    }),
  );
  const backlog = new BoardBacklog();
  const restore = new OutputRestore({
    db,
    entryOf: (taskId) => {
      // A row held since the read was asked for (its flags may make the read moot) comes first.
      const held = backlog.takeTask(taskId);
      if (held !== undefined) settle([held]);
      return entries.get(taskId);
    },
    entryOfSession: (sessionId) => entries.ofSession(sessionId),
  });
  const { queued, unkeyed } = entries;
  const atCapOf = (userId: string) => pool?.atCapOf(userId) ?? null;
  const publisher = new CardPublisher(entries, onError, atCapOf);
  const publish = (taskIds: readonly string[], keyMoved = false) =>
    publisher.publish(taskIds, keyMoved);
  // Told from a timer: a throw is reported, as a card listener's is (runtimeListenerError.ts).
  const lineListeners = new Listeners<void>((error) =>
    onError(new RuntimeListenerError('line', error)),
  );
  let pending = false;

  /** The pool's position; else the one last shown; else the database's order. */
  const positions = (list: Iterable<BoardEntry>): Map<string, number> =>
    positionsOf(list, pool, () =>
      [...queued]
        .map((id) => entries.get(id)?.session)
        .filter((s): s is Session => s !== undefined),
    );

  /** Brings the queued cards' positions up to the pool's; returns the ones that moved. */
  const reposition = (only?: Iterable<string>): string[] => {
    const ids = only === undefined ? [...queued] : [...only].filter((id) => queued.has(id));
    // A card off the line (most of a job's changes) has no position to move.
    if (ids.length === 0) return [];
    const list = ids.map((id) => entries.get(id)).filter((e): e is BoardEntry => e !== undefined);
    const next = positions(list);
    const moved: string[] = [];
    for (const e of list) {
      const p = next.get(e.task.id) ?? null;
      if (p !== e.position) {
        e.position = p;
        moved.push(e.task.id);
      }
    }
    return moved;
  };

  const unsubscribePool = pool?.subscribe(() => {
    if (pending || (publisher.size === 0 && lineListeners.size === 0)) return;
    pending = true;
    const pass = () => {
      pending = false;
      publish(reposition(unkeyed));
      lineListeners.emit();
    };
    if (push === undefined) queueMicrotask(pass);
    else push.schedule(pass, push.pushEveryMs);
  });

  /** Brings one card up to date after `put`. */
  const show = async (taskId: string) => {
    await restore.soon(taskId);
    reposition([taskId]);
    publish([taskId]);
  };

  const refresh = async (taskId: string): Promise<void> => {
    catchUp();
    const rows = await readCardRows(db, taskId);
    if (rows !== undefined && entries.put(rows.task, rows.session)) await show(taskId);
  };

  /**
   * The card takes a row `apply` was handed: true when it changed, 'read'
   * when the task is unknown here (its card must be read).
   */
  const take = (r: HeldRow): boolean | 'read' => {
    const { session, task } = r;
    const prev = entries.get(session.taskId);
    // The very row this card shows already, handed in again (a runner's
    // finish comes back to it after its tick showed it): a card off the
    // line (no position to move) would be rebuilt identical, its output
    // read or asked for already, and emitted to nobody. Only the flag is news.
    if (
      prev !== undefined &&
      prev.session === session &&
      session.status !== 'queued' &&
      (task === undefined || sameTask(task, prev.task)) &&
      r.storedOutput === undefined
    ) {
      if (r.outputShown) prev.restored = true;
      return false;
    }
    const known = task ?? prev?.task;
    if (known === undefined) return 'read';
    if (!entries.put(known, session, r.asOf)) return false;
    const e = entries.get(session.taskId);
    if (r.outputShown && e !== undefined) e.restored = true;
    if (r.storedOutput !== undefined && e !== undefined) restore.take(e, r.storedOutput);
    return true;
  };

  /** BoardIndex.apply, whose doc says what it does. */
  const applyRows = (r: HeldRow): Promise<void> => {
    const took = take(r);
    return took === 'read' ? refresh(r.session.taskId) : took ? show(r.session.taskId) : DONE;
  };

  /**
   * Held rows reach their cards, in order. Only ever with nobody listening
   * (rows are held only then, and a first listener's subscribe comes here
   * before it is added), so the cards are told to nobody, as `apply` would
   * have told them; what a stored output's read adds later is told to
   * whoever listens by then.
   */
  const settle = (rows: readonly HeldRow[]) => {
    if (rows.length === 0) return;
    const ids: string[] = [];
    for (const r of rows) {
      const took = take(r);
      if (took === 'read') void refresh(r.session.taskId).catch(onError);
      else if (took) ids.push(r.session.taskId);
    }
    reposition(ids);
    let restoring: Promise<string[]> | undefined;
    for (const id of ids) {
      publisher.forget(id);
      // In the same batch as apply's would be (a row handed in meanwhile may make the read moot).
      restoring = restore.soon(id);
    }
    void restoring?.then((restored) => publish(restored), onError);
  };
  /** Before any read of the board: every held row reaches its card. */
  const catchUp = () => {
    if (backlog.size > 0) settle(backlog.drain());
  };

  return {
    cards(userId) {
      catchUp();
      const list = [...entries.values()]
        .filter((e) => userId === null || e.task.userId === userId)
        .sort(byBoardOrder);
      const pos = positions(list.filter((e) => e.session.status === 'queued'));
      return list.map((e) =>
        toCard(
          e,
          pos.get(e.task.id) ?? null,
          e.session.status === 'queued' ? atCapOf(e.task.userId) : null,
        ),
      );
    },
    subscribe(listener, onRemoved) {
      catchUp();
      // With nobody listening the passes were skipped, so the positions last
      // shown may be behind the lines (a later arrival took an earlier turn).
      // The first listener reads cards() live; catch the shown positions up
      // and forget what was emitted for them, so the next move is told even
      // when it lands back on a number once sent.
      if (publisher.size === 0) for (const id of reposition()) publisher.forget(id);
      return publisher.add(listener, onRemoved);
    },
    async loadAll(endedSince) {
      catchUp();
      const { tasks, latest, previous } = await readAllCardRows(db, endedSince);
      const ids: string[] = [];
      for (const t of tasks) {
        const s = latest.get(t.id);
        // Past its retention: its rows are about to go, and its card with them.
        if (s && (endedSince === undefined || !endedBefore(s, endedSince))) {
          entries.put(t, s);
          const e = entries.get(t.id);
          const before = previous.get(t.id);
          if (e !== undefined && before !== undefined && e.previous === null) e.previous = before;
          ids.push(t.id);
        }
      }
      await restore.now(ids);
      reposition();
      publish(ids);
    },
    refresh,
    evict(before) {
      catchUp();
      const gone = entries.evict(before);
      publisher.removed(gone);
      return gone;
    },
    apply(session, task, options = NO_OPTIONS) {
      // Not async: a job's rows come here ~8 times, most of them rows the
      // card shows already, and an async call's promise and suspended frame
      // were ~7 KB of garbage per job. A throw is still a rejection.
      try {
        const row: HeldRow = {
          session,
          task,
          outputShown: options.outputShown === true,
          storedOutput: options.storedOutput,
          ...(options.asOf === undefined ? {} : { asOf: options.asOf }),
        };
        if (publisher.size === 0 && lineListeners.size === 0) {
          settle(backlog.hold(row, entries.get(session.taskId)?.session));
          return DONE;
        }
        catchUp();
        return applyRows(row);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    appendOutput(sessionId, chunk) {
      // Its own card only: a held row moves no other card (runtimeBoardBacklog.ts).
      const held = backlog.takeSession(sessionId);
      if (held !== undefined) settle([held]);
      const e = entries.ofSession(sessionId);
      if (e === undefined || e.session.id !== sessionId) return;
      // Adopted here: its runner streams the output from the start.
      if (e.shared === true) Object.assign(e, { lines: [], partial: '', shared: false });
      // As the stored output will have it (fitOutput): the card must not change at the finish.
      ({ lines: e.lines, partial: e.partial } = pushOutput(e, withoutNul(chunk), CARD_OUTPUT));
      publish([e.task.id]);
    },
    runningSessions() {
      catchUp();
      const out: { sessionId: string; epoch: number }[] = [];
      for (const id of entries.running) {
        const s = entries.get(id)?.session;
        if (s !== undefined) out.push({ sessionId: s.id, epoch: s.epoch });
      }
      return out;
    },
    showTail(sessionId, epoch, lines) {
      catchUp();
      const e = entries.ofSession(sessionId);
      const s = e?.session;
      if (e === undefined || s?.id !== sessionId || s.status !== 'running' || s.epoch !== epoch)
        return;
      Object.assign(e, { lines, partial: '', shared: true });
      publish([e.task.id]);
    },
    line: boardLine(entries, pool, lineListeners, catchUp),
    close() {
      unsubscribePool?.();
    },
  };
}
