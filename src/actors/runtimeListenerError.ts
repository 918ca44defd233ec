/**
 * A listener handed to the runtime threw. Cards, line moves and supervisor
 * events are told from inside a runner's output, a tick's reply, a timer,
 * a microtask or a supervision step, where a throw would crash a runner,
 * cut the step short or end the process; so the throw is caught, the
 * listeners after it still hear, and this goes to the runtime's `onError`
 * (`cause` is what was thrown).
 */

/** Which listener: a board subscriber, a line listener, an `onSupervisorEvent` listener. */
export type RuntimeListenerKind = 'board' | 'line' | 'supervisor_event';

const WHO: Record<RuntimeListenerKind, string> = {
  board: 'a board subscriber',
  line: 'a line listener',
  supervisor_event: 'an onSupervisorEvent listener',
};

/**
 * @example
 * ```ts
 * new RuntimeListenerError('board', new Error('bug')).message // => 'a board subscriber threw: bug'
 * new RuntimeListenerError('line', 'oops').code // => 'RUNTIME_LISTENER_FAILED'
 * ```
 */
export class RuntimeListenerError extends Error {
  override readonly name = 'RuntimeListenerError';
  readonly code = 'RUNTIME_LISTENER_FAILED';
  constructor(
    readonly listener: RuntimeListenerKind,
    cause: unknown,
  ) {
    super(`${WHO[listener]} threw: ${cause instanceof Error ? cause.message : String(cause)}`, {
      cause,
    });
  }
}
