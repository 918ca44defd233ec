/**
 * A progress line for work that takes a while (migrations, the boot sweep):
 * on a terminal, one line redrawn in place with the elapsed time; elsewhere,
 * a log record when the work starts and one when it ends, so a JSON log
 * never fills with spinner frames.
 */
import type { Logger } from 'pino';

/** The timers the progress line uses, injectable so tests run in no time. */
export interface ProgressClock {
  now(): number;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

export const realProgressClock: ProgressClock = {
  now: () => Date.now(),
  setInterval: (fn, ms) => {
    const handle = setInterval(fn, ms);
    // A progress line must never keep the process alive on its own.
    handle.unref();
    return handle;
  },
  clearInterval: (handle) => clearInterval(handle as ReturnType<typeof setInterval>),
};

export interface ProgressOptions {
  isTTY: boolean;
  write: (text: string) => void;
  logger: Pick<Logger, 'info' | 'error'>;
  clock?: ProgressClock;
  /** Redraw period on a terminal. */
  frameMs?: number;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * Seconds with one decimal, rounded down (a progress line never overstates).
 *
 * @example
 * ```ts
 * seconds(1234) // => '1.2s'
 * seconds(40) // => '0.0s'
 * ```
 */
export function seconds(ms: number): string {
  return `${(Math.floor(ms / 100) / 10).toFixed(1)}s`;
}

/**
 * Runs `work`, showing `label` while it runs. `summary` turns the result
 * into the closing words. The work's error is rethrown untouched.
 */
export async function withProgress<T>(
  label: string,
  work: () => Promise<T>,
  options: ProgressOptions,
  summary: (result: T) => string = () => '',
): Promise<T> {
  const clock = options.clock ?? realProgressClock;
  const started = clock.now();
  let frame = 0;
  const clear = '\r\x1b[2K';
  let timer: unknown;
  if (options.isTTY) {
    const draw = () => {
      frame = (frame + 1) % FRAMES.length;
      options.write(`${clear}${FRAMES[frame]} ${label}… ${seconds(clock.now() - started)}`);
    };
    draw();
    timer = clock.setInterval(draw, options.frameMs ?? 120);
  } else {
    options.logger.info({ step: label }, `${label}…`);
  }
  try {
    const result = await work();
    const took = seconds(clock.now() - started);
    const words = summary(result);
    if (options.isTTY) {
      options.write(`${clear}✓ ${label} in ${took}${words ? `: ${words}` : ''}\n`);
    } else {
      options.logger.info(
        { step: label, ms: clock.now() - started },
        `${label} done${words ? `: ${words}` : ''}`,
      );
    }
    return result;
  } catch (error) {
    if (options.isTTY)
      options.write(`${clear}✗ ${label} failed after ${seconds(clock.now() - started)}\n`);
    else options.logger.error({ step: label, ms: clock.now() - started }, `${label} failed`);
    throw error;
  } finally {
    if (timer !== undefined) clock.clearInterval(timer);
  }
}
