/**
 * A task as its job page shows it (GET /api/tasks/:id and its output
 * routes): what it runs, every attempt with its status changes, and the
 * stored output. One shape, written once: the store's `getTaskRecord`
 * returns it and the UI server and the client read it. Part of the board
 * port (boardPort.ts).
 */

/** One attempt of a task on its job page. Times are ISO-8601 UTC strings, or null. */
export interface TaskAttemptDetail {
  sessionId: string;
  attempt: number;
  status: string;
  /**
   * Its place in line: for a queued attempt, its exact 1-based place in
   * the global order as the read found it (as a card's `queued.position`);
   * 0 while it runs; null once it ended (or when a row written outside the
   * ticks has no place yet).
   */
  position: number | null;
  enqueuedAt: string;
  claimedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  exitCode: number | null;
  failureReason: string | null;
  /** The owner (`node@boot`) that holds or last held it. */
  node: string | null;
  backend: string | null;
  handle: string | null;
  /** Its status changes, oldest first, each with the reason it was made. */
  events: Array<{
    from: string | null;
    to: string;
    reason: string | null;
    node: string | null;
    at: string;
  }>;
}

/** A task for its job page: what it runs and every attempt, oldest first. */
export interface TaskDetail {
  taskId: string;
  userId: string;
  title: string;
  image: string;
  command: string[];
  /** The names of its environment variables; the values (often secrets) never leave the store. */
  envKeys: string[];
  createdAt: string;
  /** The idempotency key it was submitted with (`CreateTaskInput.key`); absent: none. */
  submitKey?: string;
  /** How long a run of it may hold its runner, in ms (`CreateTaskInput.timeLimitMs`); absent: no limit. */
  timeLimitMs?: number;
  attempts: TaskAttemptDetail[];
}

/** A finished attempt's stored output (whole up to 16 MiB; a cut is marked in `text`). */
export interface StoredOutput {
  text: string;
  totalBytes: number;
  truncated: boolean;
}

/** One page of an attempt's stored output (`GET /api/tasks/:id/sessions/:sid/output`). */
export interface OutputPage {
  sessionId: string;
  /** Index of the first line in `lines` (0-based). */
  from: number;
  lines: string[];
  totalLines: number;
  totalBytes: number;
  truncated: boolean;
}
