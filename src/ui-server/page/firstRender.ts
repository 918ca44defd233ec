/**
 * When the board page renders first. The early socket's snapshot is on its
 * way as the page's script starts (src/client/earlySocket.ts); a render
 * before it lands would draw an empty board, and laying that out, painting
 * it and running its effects would come before the snapshot's frame is even
 * read. So the first render waits until the store has something to show: a
 * snapshot, a lost socket (offline) or an error. Never longer than
 * `maxWaitMs`: a page with nothing yet shows its empty board then, as before.
 *
 * Imports nothing from `node:*`: the browser bundle includes this file.
 */
import type { BoardContext, BoardStore } from '../../client/boardStore.js';

/** Whether the store holds more than a board still connecting. */
export function hasFirstFrame(ctx: BoardContext): boolean {
  return ctx.connection !== 'connecting' || ctx.lastError !== null;
}

/**
 * Calls `render` once: at once if the store already has its first frame,
 * else as it gets one, or after `maxWaitMs`, whichever comes first. Called
 * from the store's listener, it runs in a microtask: after the frame's own
 * handling, before the browser does anything else.
 */
export function renderOnFirstFrame(store: BoardStore, maxWaitMs: number, render: () => void): void {
  if (hasFirstFrame(store.getSnapshot().context)) {
    render();
    return;
  }
  let done = false;
  const go = () => {
    if (done) return;
    done = true;
    sub.unsubscribe();
    clearTimeout(timer);
    render();
  };
  const sub = store.subscribe((snap) => {
    if (hasFirstFrame(snap.context)) queueMicrotask(go);
  });
  const timer = setTimeout(go, maxWaitMs);
}
