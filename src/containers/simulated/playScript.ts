/**
 * Plays one scripted command inside a simulated container: its output steps
 * into the container's output file and the owner's stream, then the exit
 * marker, each at its time on the cluster's clock.
 */
import type { Clock } from '../Clock.js';
import { ContainerError } from '../ContainerError.js';
import type { SimScript } from './commands.js';

/** An exec in flight; `lose` is how its container's death reaches it. */
export interface RunningExec {
  timers: unknown[];
  lose: () => void;
}

export interface PlayTarget {
  clock: Clock;
  /** The container's `/tmp`. */
  tmp: Map<string, string>;
  outputPath: string;
  markerPath: string;
  /** Named when the exec is lost, e.g. `container c3 of rt-s1`. */
  what: string;
  onOutput: (chunk: string) => void;
  /** The container's execs in flight: the play adds itself and leaves when done. */
  running: Set<RunningExec>;
}

/** Resolves with the script's exit once the marker is written; rejects `exec_lost` when lost. */
export function playScript(script: SimScript, target: PlayTarget): Promise<{ exitCode: number }> {
  const { clock, tmp, outputPath: out, markerPath: marker, running } = target;
  const done = new Promise<{ exitCode: number }>((resolve, reject) => {
    const exec: RunningExec = {
      timers: [],
      lose: () => {
        for (const t of exec.timers) clock.clearTimeout(t);
        reject(new ContainerError('exec_lost', `${target.what} went away`));
      },
    };
    running.add(exec);
    // Every timer is set up front (a clock jump fires them all at once);
    // each emits all steps due by its time, so output stays in order and
    // precedes the marker whatever order same-instant timers fire in.
    const steps = [...script.output].sort((a, b) => a.atMs - b.atMs);
    const endAt = Math.max(script.durationMs, ...steps.map((s) => s.atMs));
    let emitted = 0;
    const emitUpTo = (atMs: number) => {
      for (let step = steps[emitted]; step && step.atMs <= atMs; step = steps[emitted]) {
        emitted += 1;
        tmp.set(out, (tmp.get(out) ?? '') + step.text);
        target.onOutput(step.text);
      }
    };
    for (const step of steps) {
      exec.timers.push(clock.setTimeout(() => emitUpTo(step.atMs), step.atMs));
    }
    exec.timers.push(
      clock.setTimeout(() => {
        emitUpTo(Number.POSITIVE_INFINITY);
        running.delete(exec);
        tmp.set(marker, `${script.exitCode}\n`);
        resolve({ exitCode: script.exitCode });
      }, endAt),
    );
  });
  // The owner may never await `done` (it restarted); a lost exec is not an unhandled error.
  done.catch(() => undefined);
  return done;
}
