/**
 * The node's I/O calls in flight (`runtime.busy()`): the test harness calls
 * the system settled when the clock has nothing due and this is 0, so every
 * call the shell starts off a caller's path (a board read, a vacuum, a
 * runner start, a probe) is counted until it settles.
 */
export class InFlight {
  private n = 0;

  /**
   * `work`, counted until it settles; its outcome is passed through.
   *
   * @example
   * ```ts
   * const f = new InFlight();
   * const work = f.track(new Promise((resolve) => setTimeout(resolve, 1)));
   * f.count() // => 1
   * await work;
   * f.count() // => 0
   * ```
   */
  readonly track = <T>(work: Promise<T>): Promise<T> => {
    this.n += 1;
    return work.finally(() => {
      this.n -= 1;
    });
  };

  count(): number {
    return this.n;
  }
}
