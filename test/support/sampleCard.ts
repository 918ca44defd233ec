/**
 * A sample card for tests, in a file of its own so that a pure test file
 * can name it and still share a process (sharedProcessFiles.ts reads the
 * test's text: the client's harness, which re-exports it, is not pure).
 */
import type { BoardCard } from '../../src/board/boardPort.js';

/** A queued card of alice's, first in line and not at her cap, with `extra` over it. */
export const queuedCard = (taskId: string, extra: Partial<BoardCard> = {}): BoardCard => ({
  taskId,
  userId: 'alice',
  title: taskId,
  column: 'queued',
  sessionId: `s-${taskId}`,
  attempt: 1,
  status: 'queued',
  queued: { position: 1, since: '2026-11-01T10:00:00.000Z', atCap: null },
  running: null,
  failure: null,
  exitCode: null,
  lastOutput: [],
  updatedAt: '2026-11-01T10:00:00.000Z',
  ...extra,
});
