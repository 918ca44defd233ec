/**
 * The UI server as a supervised child of the runtime's root (permanent): if
 * it crashes, the supervisor starts it again on the same port; when the tree
 * stops, it stops first (it started last), so no board client watches a
 * runtime that is going away.
 */
import type { CallbackActorLogic, EventObject } from 'xstate';
import { fromSafeCallback } from '../supervisor/fromSafeCallback.js';
import { createUiServer, type UiServer } from '../ui-server/createUiServer.js';

export interface UiServerChildDeps {
  /** Options of every incarnation (same port, so the URLs printed stay right). */
  options: () => Parameters<typeof createUiServer>[0];
  /** Each incarnation, once it listens. */
  onListening(server: UiServer): void;
  /** An incarnation that could not listen (the supervisor restarts it). */
  onStartFailed(error: unknown): void;
  /** A close that failed (logged; the listener is gone either way). */
  onCloseFailed(error: unknown): void;
}

/** The child's logic; give it to `startChild({ id, restart: 'permanent', start: { logic } })`. */
export function uiServerChild(deps: UiServerChildDeps): CallbackActorLogic<EventObject, unknown> {
  return fromSafeCallback(({ fail }) => {
    let stopped = false;
    let server: UiServer | undefined;
    createUiServer(deps.options()).then(
      (s) => {
        // Stopped while it was starting: close what came up too late to be used.
        if (stopped) return void s.close().catch(deps.onCloseFailed);
        server = s;
        deps.onListening(s);
      },
      (error: unknown) => {
        deps.onStartFailed(error);
        // A stopped actor has nobody to tell; a live one fails, and its supervisor decides.
        if (!stopped) fail(error);
      },
    );
    return () => {
      stopped = true;
      server?.close().catch(deps.onCloseFailed);
    };
  });
}
