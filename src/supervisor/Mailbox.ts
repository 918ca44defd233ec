/**
 * A supervisor's mailbox, like a gen_server's: jobs (exits, startChild,
 * terminateChild, shutdown) run one at a time, and a job that returns a
 * promise holds the mailbox until it settles, so an exit that arrives while
 * siblings are being stopped waits its turn instead of interleaving.
 */

export type Job = () => void | Promise<void>;

export class Mailbox {
  private readonly queue: Job[] = [];
  private busy = false;

  /** `onJobRejected` runs when a job's promise rejects: a supervisor bug. */
  constructor(private readonly onJobRejected: () => void) {}

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
      const r = job();
      if (r instanceof Promise) {
        r.then(
          () => {
            this.busy = false;
            this.drain();
          },
          // A job rejecting is a supervisor bug; die loudly rather than hang.
          (error: unknown) => {
            this.busy = false;
            this.onJobRejected();
            throw error;
          },
        );
        return;
      }
      this.busy = false;
    }
  }
}
