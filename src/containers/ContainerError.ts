/**
 * The one error type that crosses the `ContainerBackend` port. Callers branch
 * on `code`, never on messages; the engine's own error stays in `cause`.
 */

/** Stable reasons a container call failed. */
export type ContainerErrorCode =
  /** The call's deadline passed before the engine answered. */
  | 'timeout'
  /** The engine could not be reached (socket missing, refused, API failing). */
  | 'unavailable'
  /** The service, container or file does not exist. */
  | 'not_found'
  /** The engine refused the request as conflicting (e.g. the name is taken). */
  | 'conflict'
  /** A caller passed something invalid (a bad session id, an empty command). */
  | 'invalid_argument'
  /**
   * The engine refused this run as specified (no such image, a bad mount or
   * spec): starting it again unchanged fails the same way. The message is the
   * engine's own reason, cut to `REASON_LIMIT` characters.
   */
  | 'rejected'
  /** Attach was asked for a run this backend instance did not start. */
  | 'not_attached'
  /** The run's exec vanished with its container before writing the marker. */
  | 'exec_lost'
  /** The caller's AbortSignal fired. */
  | 'aborted'
  /** The engine answered with an error we have no better name for. */
  | 'engine';

/**
 * A failed container call.
 *
 * @example
 * ```ts
 * new ContainerError('timeout', 'observe took too long').code // => 'timeout'
 * new ContainerError('timeout', 'x').name // => 'ContainerError'
 * isContainerError(new ContainerError('not_found', 'gone')) // => true
 * isContainerError(new Error('plain')) // => false
 * ```
 */
export class ContainerError extends Error {
  override readonly name = 'ContainerError';
  readonly code: ContainerErrorCode;

  constructor(code: ContainerErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Longest engine reason a `rejected` message keeps: it ends up on a board card. */
export const REASON_LIMIT = 300;

/**
 * The engine's reason as one trimmed line of at most `limit` characters, the
 * cut marked with an ellipsis, so a huge or multi-line engine error cannot
 * flood a card or a log line.
 *
 * @example
 * ```ts
 * cutReason('  No such image: runner:9 \n') // => 'No such image: runner:9'
 * cutReason('a\n  b') // => 'a b'
 * cutReason('x'.repeat(10), 5) // => 'xxxx…'
 * cutReason('') // => 'no reason given'
 * ```
 */
export function cutReason(text: string, limit = REASON_LIMIT): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return 'no reason given';
  return line.length <= limit ? line : `${line.slice(0, limit - 1)}…`;
}

/** Narrows an unknown thrown value to a `ContainerError`. */
export function isContainerError(value: unknown): value is ContainerError {
  return value instanceof ContainerError;
}
