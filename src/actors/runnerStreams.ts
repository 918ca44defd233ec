/**
 * A run's output on its way to the board while it runs: the exec stream of
 * a run this boot started (`attachRun`), or the output file of an adopted
 * run as it is written (`followRun`, when the backend can follow). Both
 * count what they passed on in the run's state, so finalize hands the
 * board only the rest.
 */
import type { ContainerBackend, RunRef } from '../containers/ContainerBackend.js';
import type { ContainerRunEvent } from '../machines/containerRunTypes.js';
import type { SupervisorClock } from '../supervisor/clock.js';
import { type EventTarget, type RunState, tell } from './taskRunnerDeps.js';

/** A chunk of a run's output on its way to the board. */
function shown(run: RunState, chunk: string, onOutput: (sessionId: string, chunk: string) => void) {
  run.streamed += chunk.length;
  run.streamedBytes += Buffer.byteLength(chunk);
  onOutput(run.sessionId, chunk);
}

/** Streams `input`'s output to the board (and the chart `to`) while `run` lasts. */
type RunStream = (
  backend: ContainerBackend,
  run: RunState | undefined,
  to: EventTarget<ContainerRunEvent>,
  input: RunRef,
  onOutput: (sessionId: string, chunk: string) => void,
) => void;

/**
 * An adopted run's output as it is written: from where this boot's
 * stream of it broke off, or (adopted from another boot) from the last
 * lines written so far. Stopped by `run.unfollow` or when the run ends.
 * After `unfollow` the backend reads to the end of the file first, which
 * for a file behind an engine's API takes round trips: its chunks still
 * reach the board until the follow says it ended (`run.followEnd`).
 */
export const followRun: RunStream = (backend, run, to, input, onOutput) => {
  const follow = backend.follow?.bind(backend);
  if (run === undefined || follow === undefined || run.abort.signal.aborted) return;
  const stop = new AbortController();
  let open = true;
  let stopping = false;
  let settle = () => {};
  const done = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const end = () => {
    open = false;
    settle();
  };
  const ended = () => {
    end();
    stop.abort();
  };
  run.abort.signal.addEventListener('abort', ended, { once: true });
  follow(input, {
    signal: stop.signal,
    ...(run.streamedBytes > 0 ? { fromByte: run.streamedBytes } : {}),
    onOutput: (chunk) => {
      if (!open) return;
      shown(run, chunk, onOutput);
      if (!stopping) tell(to, { type: 'roundtable.run.output', chunk });
    },
    onEnd: () => {
      run.abort.signal.removeEventListener('abort', ended);
      end();
    },
  });
  run.unfollow = () => {
    run.unfollow = null;
    // The stop reads to the end of the file first (on the marker: the whole output).
    stopping = true;
    run.followed = true;
    run.followEnd = { done, cut: end };
    stop.abort();
  };
};

/**
 * How long a finish waits for a stopped follow's read to the end. By then
 * the run's output was read whole once more (`readOutput`, after the
 * stop), so a follow still reading is an engine slower than that; the
 * finish, and the slot it frees, do not wait on it longer.
 */
export const FOLLOW_END_WAIT_MS = 5_000;

/**
 * Waits for a stopped follow's read to the end, at most `ms` on `clock`,
 * then passes nothing more of it on: a follow that did not end by then
 * (an engine too slow to answer) leaves the card without its last lines,
 * which the stored output still has.
 */
export async function settleFollow(
  run: RunState,
  clock: SupervisorClock,
  ms = FOLLOW_END_WAIT_MS,
): Promise<void> {
  const f = run.followEnd;
  if (f === null) return;
  let timer: unknown = null;
  await Promise.race([
    f.done,
    new Promise<void>((resolve) => {
      timer = clock.setTimeout(resolve, ms);
    }),
  ]);
  clock.clearTimeout(timer);
  f.cut();
  run.followEnd = null;
}

/** The exec stream of a run this boot started, until it exits or the stream breaks. */
export const attachRun: RunStream = (backend, run, to, input, onOutput) => {
  const signal = run?.abort.signal;
  if (run === undefined || signal === undefined || signal.aborted) return;
  const send = (e: ContainerRunEvent) => {
    if (!signal.aborted) tell(to, e);
  };
  // Not tracked: attach waits on the run's own time, it is not I/O in flight.
  Promise.resolve()
    .then(() =>
      backend.attach(input, {
        signal,
        onOutput: (chunk) => {
          if (signal.aborted) return;
          shown(run, chunk, onOutput);
          send({ type: 'roundtable.run.output', chunk });
        },
      }),
    )
    .then(
      (exit) => send({ type: 'roundtable.run.exited', exitCode: exit.exitCode }),
      (error: unknown) => send({ type: 'roundtable.run.attach.error', error }),
    );
};
