/**
 * A supervisor's mailbox, like a gen_server's: jobs (exits, startChild,
 * terminateChild, shutdown) run one at a time, and a job that returns a
 * promise holds the mailbox until it settles, so an exit that arrives while
 * siblings are being stopped waits its turn instead of interleaving.
 *
 * A job that throws or rejects frees the mailbox like any other: the jobs
 * behind it still run (a wedged mailbox would never restart a child nor
 * finish a shutdown). The failure goes to `onJobFailed`, once.
 */

export type Job = () => void | Promise<void>;

export class Mailbox {
  private readonly queue: Job[] = [];
  private busy = false;

  /**
   * `onJobFailed` gets what a job threw or rejected with (a supervisor bug,
   * or a fault in what it was given). It must not throw; if it does, the
   * throw is not caught here either, but the mailbox is already free.
   */
  constructor(private readonly onJobFailed: (error: unknown) => void) {}

  /** No job running and none waiting: a job posted now runs at once. */
  get idle(): boolean {
    return !this.busy && this.queue.length === 0;
  }

  /** Runs `job` now if the mailbox is idle, else after the jobs before it. */
  post(job: Job): void {
    this.queue.push(job);
    this.drain();
  }

  /**
   * Runs `fn` as a job and settles with its result. `admit` is checked when
   * the job's turn comes (a supervisor that exited in the meantime rejects).
   */
  call<T>(admit: () => Error | undefined, fn: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.post(() => {
        const refused = admit();
        if (refused) return reject(refused);
        try {
          const r = fn();
          if (r instanceof Promise) return r.then(resolve, reject);
          resolve(r);
        } catch (error) {
          reject(error);
        }
      });
    });
  }

  /**
   * `call` for a synchronous `fn`. When the mailbox is idle the job runs at
   * once, as `post` would run it, but without queueing a job closure and a
   * promise executor; jobs it posts run right after it, as they would.
   */
  callSync<T>(admit: () => Error | undefined, fn: () => T): Promise<T> {
    if (!this.idle) return this.call(admit, fn);
    const refused = admit();
    if (refused) return Promise.reject(refused);
    this.busy = true;
    let result: T;
    try {
      result = fn();
    } catch (error) {
      this.busy = false;
      this.drain();
      return Promise.reject(error);
    }
    this.busy = false;
    this.drain();
    return Promise.resolve(result);
  }

  private drain(): void {
    while (!this.busy) {
      const job = this.queue.shift();
      if (!job) return;
      this.busy = true;
      let r: void | Promise<void>;
      try {
        r = job();
      } catch (error) {
        this.busy = false;
        this.onJobFailed(error);
        continue;
      }
      if (r instanceof Promise) {
        r.then(
          () => this.release(),
          (error: unknown) => this.release(error, true),
        );
        return;
      }
      this.busy = false;
    }
  }

  /** An async job settled: free the mailbox, report a failure, run the rest. */
  private release(error?: unknown, failed = false): void {
    this.busy = false;
    // Reported before the next job runs, so a supervisor that crashes on it
    // refuses the calls queued behind the failed job.
    if (failed) this.onJobFailed(error);
    this.drain();
  }
}
