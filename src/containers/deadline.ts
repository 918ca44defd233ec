/**
 * Bounds a wait: every engine call goes through `withDeadline`, so a hung
 * socket becomes a `timeout` error instead of a hang.
 */
import type { Clock } from './Clock.js';
import { ContainerError, isContainerError } from './ContainerError.js';

export interface DeadlineOptions {
  clock: Clock;
  ms: number;
  /** Named in the timeout error, e.g. `observe rt-s1`. */
  what: string;
  signal?: AbortSignal;
  /** Called when the deadline or the signal ends the wait, to cancel the work. */
  onAbandon?: () => void;
}

/**
 * Resolves with `work`, or rejects with `timeout` after `ms` on `clock`, or
 * with `aborted` when `signal` fires. Errors from `work` that are not already
 * `ContainerError`s are passed through `classify`.
 */
export function withDeadline<T>(
  work: Promise<T>,
  options: DeadlineOptions,
  classify: (error: unknown) => ContainerError = (error) =>
    isContainerError(error)
      ? error
      : new ContainerError('engine', `${options.what} failed`, { cause: error }),
): Promise<T> {
  const { clock, ms, what, signal, onAbandon } = options;
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clock.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      fn();
    };
    const onAbort = () =>
      finish(() => {
        onAbandon?.();
        reject(new ContainerError('aborted', `${what} aborted`, { cause: signal?.reason }));
      });
    const timer = clock.setTimeout(
      () =>
        finish(() => {
          onAbandon?.();
          reject(new ContainerError('timeout', `${what} took longer than ${ms} ms`));
        }),
      ms,
    );
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => finish(() => resolve(value)),
      (error: unknown) => finish(() => reject(classify(error))),
    );
  });
}
