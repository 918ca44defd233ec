/**
 * `call`, as gen_server's: send a request, wait for the correlated reply
 * until a deadline. The request carries `callRef` and a `reply` function;
 * the target answers with `event.reply(value)`. Only the first reply counts;
 * replies after a timeout or exit are dropped.
 */
import type { AnyActorRef, EventObject } from 'xstate';
import { type SupervisorClock, systemClock } from './clock.js';
import { CallExitError, CallTimeoutError } from './errors.js';
import { watchExit } from './watchExit.js';

/** What the target receives: the request plus the reply convention. */
export type CallRequest<TEvent extends EventObject, TReply> = TEvent & {
  callRef: string;
  reply: (value: TReply) => void;
};

export interface CallOptions {
  /** Default 5000 ms, gen_server's default. */
  timeoutMs?: number;
  clock?: SupervisorClock;
}

let seq = 0;

export function call<TReply, TEvent extends EventObject = EventObject>(
  target: AnyActorRef,
  request: TEvent,
  options: CallOptions = {},
): Promise<TReply> {
  const { timeoutMs = 5_000, clock = systemClock } = options;
  seq += 1;
  const callRef = `call-${seq}`;
  return new Promise<TReply>((resolve, reject) => {
    let settled = false;
    let timer: unknown;
    let unwatch: (() => void) | undefined;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      unwatch?.();
      fn();
    };
    unwatch = watchExit(target, (reason) =>
      settle(() => reject(new CallExitError(callRef, reason))),
    );
    if (!unwatch) {
      settle(() => reject(new CallExitError(callRef, 'noproc')));
      return;
    }
    timer = clock.setTimeout(
      () => settle(() => reject(new CallTimeoutError(callRef, timeoutMs))),
      timeoutMs,
    );
    const event: CallRequest<TEvent, TReply> = {
      ...request,
      callRef,
      reply: (value: TReply) => settle(() => resolve(value)),
    };
    target.send(event);
  });
}
