/**
 * The listeners a supervisor calls from inside its own jobs (system events,
 * exit listeners). A listener that throws must not stop the job that called
 * it: the restart it was told about still happens, the listeners after it
 * still hear, and a `shutdown()` waiting on the exit still settles. Its
 * throw is reported, never propagated.
 */

/** Calls each listener in turn; a throw goes to `onThrow`, then the next one runs. */
export class Listeners<T> {
  private readonly set = new Set<(value: T) => void>();

  constructor(private readonly onThrow: (error: unknown, value: T) => void) {}

  get size(): number {
    return this.set.size;
  }

  /** Adds `listener`; returns the function that removes it. */
  add(listener: (value: T) => void): () => void {
    this.set.add(listener);
    return () => {
      this.set.delete(listener);
    };
  }

  /** Removes every listener (an exit is told once). */
  clear(): void {
    this.set.clear();
  }

  /**
   * Calls every listener with `value`. A listener added during the call is
   * called too (a Set visits what is added while it is walked); one removed
   * before its turn is not.
   */
  emit(value: T): void {
    for (const listener of this.set) callGuarded(listener, value, this.onThrow);
  }
}

/** Calls `listener(value)`; a throw goes to `onThrow` instead of the caller. */
export function callGuarded<T>(
  listener: (value: T) => void,
  value: T,
  onThrow: (error: unknown, value: T) => void,
): void {
  try {
    listener(value);
  } catch (error) {
    onThrow(error, value);
  }
}

/**
 * Hands `error` to the runtime's `onError`. If `onError` itself throws,
 * nothing in the supervisor can handle that: it is rethrown on a microtask,
 * where Node reports it as uncaught, rather than dropped or thrown into
 * the job that was reporting.
 *
 * @example
 * ```ts
 * const seen = [];
 * reportError((e) => seen.push(e.message), new Error('listener threw'));
 * seen // => ['listener threw']
 * ```
 */
export function reportError<E>(onError: (error: E) => void, error: E): void {
  try {
    onError(error);
  } catch (thrown) {
    queueMicrotask(() => {
      throw thrown;
    });
  }
}
