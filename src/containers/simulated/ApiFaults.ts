/**
 * The simulated engine's API faults: an outage (every call fails
 * `unavailable` until a time) and a stall (every call waits until a time,
 * then answers), both on the cluster's clock. Each API call goes through
 * `call`, which is where they bite.
 */
import type { Clock } from '../Clock.js';
import { ContainerError } from '../ContainerError.js';

export class ApiFaults {
  private failUntil = -1;
  private hangUntil = -1;
  private stalled = 0;

  constructor(private readonly clock: Clock) {}

  /** Every API call fails with `unavailable` until the clock reaches `untilMs`. */
  fail(untilMs: number): void {
    this.failUntil = untilMs;
  }

  /** Every API call stalls for `forMs` from now, then answers. */
  hang(forMs: number): void {
    this.hangUntil = this.clock.now() + forMs;
  }

  /** Runs one API call under the faults in force now. */
  /** Calls held by `hang` that only virtual time can answer. */
  stalledCalls(): number {
    return this.stalled;
  }

  call<T>(fn: () => T): Promise<T> {
    const now = this.clock.now();
    if (now < this.failUntil) {
      return Promise.reject(new ContainerError('unavailable', 'simulated API outage'));
    }
    if (now < this.hangUntil) {
      this.stalled += 1;
      return new Promise<T>((resolve, reject) => {
        this.clock.setTimeout(() => {
          this.stalled -= 1;
          try {
            resolve(fn());
          } catch (error) {
            reject(error);
          }
        }, this.hangUntil - now);
      });
    }
    try {
      return Promise.resolve(fn());
    } catch (error) {
      return Promise.reject(error);
    }
  }
}
