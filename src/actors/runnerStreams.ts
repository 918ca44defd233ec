/**
 * A run's output on its way to the board while it runs: the exec stream of
 * a run this boot started (`attachRun`), or the output file of an adopted
 * run as it is written (`followRun`, when the backend can follow). Both
 * count what they passed on in the run's state, so finalize hands the
 * board only the rest.
 */
import type { ContainerBackend, RunRef } from '../containers/ContainerBackend.js';
import type { ContainerRunEvent } from '../machines/containerRunTypes.js';
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
 */
export const followRun: RunStream = (backend, run, to, input, onOutput) => {
  const follow = backend.follow?.bind(backend);
  if (run === undefined || follow === undefined || run.abort.signal.aborted) return;
  const stop = new AbortController();
  let open = true;
  let stopping = false;
  const ended = () => {
    open = false;
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
  });
  run.unfollow = () => {
    run.unfollow = null;
    run.abort.signal.removeEventListener('abort', ended);
    // The stop reads to the end of the file first (on the marker: the whole output).
    stopping = true;
    stop.abort();
    open = false;
    run.followed = true;
  };
};

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
