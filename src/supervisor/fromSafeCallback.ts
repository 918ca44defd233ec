/**
 * XState's `fromCallback` catches a synchronous throw but not an async one:
 * a rejected promise or a throw in a timer escapes as an unhandled rejection
 * or uncaught exception. This wrapper turns both into the actor's own error,
 * which a supervisor sees as an exit.
 */
import {
  type AnyEventObject,
  type CallbackActorLogic,
  type EventObject,
  fromCallback,
} from 'xstate';

export const CALLBACK_FAILED = 'roundtable.callback.failed';

type Cleanup = () => void;

export interface SafeCallbackArgs<TEvent extends EventObject, TInput> {
  input: TInput;
  sendBack: (event: AnyEventObject) => void;
  receive: (listener: (event: TEvent) => void) => void;
  /** Fails the actor with `error` (its exit reason becomes `{ error }`). */
  fail: (error: unknown) => void;
  /** Wraps a callback (timer, listener) so a throw in it fails the actor. */
  guard: <A extends unknown[]>(fn: (...args: A) => void) => (...args: A) => void;
}

/**
 * Like `fromCallback`, but the callback may be async, and failures in it
 * (sync, async, or through `fail` / `guard`) become the actor's error.
 */
export function fromSafeCallback<TEvent extends EventObject, TInput = unknown>(
  fn: (
    args: SafeCallbackArgs<TEvent, TInput>,
  ) => Cleanup | undefined | Promise<Cleanup | undefined>,
): CallbackActorLogic<TEvent, TInput> {
  const base = fromCallback<TEvent, TInput>(({ input, sendBack, receive, self }) => {
    // Sending the failure to ourselves makes `transition` throw it, which is
    // where XState turns a throw into the actor's error.
    const fail = (error: unknown) =>
      (self as { send(e: AnyEventObject): void }).send({ type: CALLBACK_FAILED, error });
    const guard =
      <A extends unknown[]>(f: (...args: A) => void) =>
      (...args: A) => {
        try {
          f(...args);
        } catch (error) {
          fail(error);
        }
      };
    const result = fn({ input, sendBack, receive, fail, guard });
    if (!(result instanceof Promise)) return result;
    let cleanup: Cleanup | undefined;
    let stopped = false;
    result.then((c) => {
      if (stopped) c?.();
      else cleanup = c;
    }, fail);
    return () => {
      stopped = true;
      cleanup?.();
    };
  });
  return {
    ...base,
    transition: (snapshot, event, scope) => {
      const e = event as AnyEventObject;
      if (e.type === CALLBACK_FAILED) throw (e as { error?: unknown }).error;
      return base.transition(snapshot, event, scope);
    },
  };
}
