/**
 * The ContainerRun chart as a TaskRunner runs it: its four I/O actions
 * (start, attach or follow, observe, read the output) provided over the
 * container backend and the run's state. Each answers the chart with its
 * `.done` / `.error` event (no actor per call).
 */
import type { RunRef } from '../containers/ContainerBackend.js';
import { StaleStatusError } from '../db/index.js';
import type { TickHandle, TickOutcome } from '../db/tickTypes.js';
import { containerRunMachine } from '../machines/containerRun.js';
import type { ContainerRunEvent, Observation, StartedRun } from '../machines/containerRunTypes.js';
import { attachRun, followRun } from './runnerStreams.js';
import { alive, type answerWith, type RunState, type TaskRunnerDeps } from './taskRunnerDeps.js';

export interface RunnerContainerRunOptions {
  deps: Pick<TaskRunnerDeps, 'backend' | 'onError' | 'onOutput'>;
  /** The run a step of `sessionId` belongs to, if it was begun (and not closed). */
  runs: ReadonlyMap<string, RunState>;
  /** The run a step belongs to; none is a bug of ours, not an I/O fault. */
  runOf(sessionId: string): RunState;
  /** A write through the next tick, sent again while the store does not answer. */
  submit(op: Omit<TickHandle, 'ref'>): Promise<TickOutcome>;
  answer: ReturnType<typeof answerWith>;
}

const ref = (sessionId: string, handle: string): RunRef => ({ sessionId, handle });

/** `containerRunMachine` with a TaskRunner's I/O provided. */
export function runnerContainerRun(o: RunnerContainerRunOptions) {
  const { backend } = o.deps;

  const startRun = async (sessionId: string): Promise<StartedRun> => {
    const run = o.runOf(sessionId);
    const s = run.row;
    const task = run.spec;
    if (s === undefined || task === undefined)
      throw new StaleStatusError(
        sessionId,
        { status: 'running', epoch: -1 },
        { status: 'unknown', epoch: -1 },
      );
    alive(run.abort.signal);
    const started = await backend.start({
      sessionId: s.id,
      image: task.spec.image,
      command: task.spec.command,
      ...(task.spec.env ? { env: task.spec.env } : {}),
      labels: { 'roundtable.user': s.userId, 'roundtable.task': s.taskId },
    });
    run.handle = started.handle;
    // Rides the next tick; not awaited, so the run's output is not held up
    // by a commit. A finish sent later is applied after it (a tick applies
    // handles before finishes), and a crash before it commits leaves a
    // running row with no handle: an orphan the Reconciler looks for by name
    // (unrecordedRun.ts) and adopts, rather than re-queueing it to run twice.
    void o
      .submit({
        op: 'handle',
        sessionId: s.id,
        epoch: s.epoch,
        backend: backend.kind,
        handle: started.handle,
        startedAt: started.startedAt ?? null,
      })
      .then((outcome) => {
        if (outcome.kind === 'applied') run.row = outcome.session;
      }, o.deps.onError);
    return { handle: started.handle, startedAt: started.startedAt ?? null };
  };

  return containerRunMachine.provide({
    actions: {
      startRun: ({ self }, p) =>
        o.answer<StartedRun, ContainerRunEvent>(
          self,
          () => startRun(p.sessionId),
          (output) => ({ type: 'roundtable.run.startRun.done', output }),
          (error) => ({ type: 'roundtable.run.startRun.error', error }),
        ),
      attach: ({ self }, p) =>
        attachRun(backend, o.runs.get(p.sessionId), self, p, o.deps.onOutput),
      follow: ({ self }, p) => {
        // `follow` is documented never to throw. One that does must not fail the
        // adopting runner (its supervisor would restart it into the same throw):
        // the run's output then shows when it ends, as on a backend without follow.
        try {
          followRun(backend, o.runs.get(p.sessionId), self, p, o.deps.onOutput);
        } catch (error) {
          o.deps.onError(error);
        }
      },
      unfollow: (_, p) => o.runs.get(p.sessionId)?.unfollow?.(),
      observe: ({ self }, p) =>
        o.answer<Observation, ContainerRunEvent>(
          self,
          () =>
            backend.observe(ref(p.sessionId, p.handle)).then((x) => ({
              containerStartedAt: x.containerStartedAt,
              marker: x.marker,
              gone: x.presence === 'absent',
            })),
          (output) => ({ type: 'roundtable.run.observe.done', seq: p.seq, output }),
          (error) => ({ type: 'roundtable.run.observe.error', seq: p.seq, error }),
        ),
      readOutput: ({ self }, p) =>
        o.answer<string, ContainerRunEvent>(
          self,
          () =>
            backend.readOutput(ref(p.sessionId, p.handle)).then((x) => {
              const run = o.runs.get(p.sessionId);
              if (run !== undefined) run.output = x;
              // Cut output is marked, never silent (DESIGN.md).
              return x.truncated
                ? `[roundtable: output cut to its last ${x.text.length} characters]\n${x.text}`
                : x.text;
            }),
          (output) => ({ type: 'roundtable.run.readOutput.done', output }),
          (error) => ({ type: 'roundtable.run.readOutput.error', error }),
        ),
    },
  });
}
