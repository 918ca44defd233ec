/**
 * One container run as a statechart. Two ways in: the owner path (we start
 * the exec and stream it) and the adopt path (after a restart, nothing to
 * wait on but the exit marker, polled; the output file is followed meanwhile
 * when the backend can). Three ways out: `exited`, `gaveUp`, `failed`.
 *
 * No I/O here: each state that needs some asks for it with an entry action
 * (`startRun`, `attach`, `observe`, `readOutput`) that the TaskRunner (or a
 * test) provides with `containerRunMachine.provide({ actions })`; whoever
 * performs it sends the answer back as an event (`roundtable.run.<op>.done`
 * or `.error`, ContainerRunIoEvent), which only the state that asked takes.
 * An answer is an event, not an invoked child actor: a run costs no actor
 * per I/O call. Time is read from the actor system's clock, so a
 * `SimulatedClock` drives both the poll delay and the budget. See
 * docs/container-run.md.
 */
import { assign, emit, setup } from 'xstate';
import {
  type ContainerRunContext,
  decideNow,
  failedRead,
  failure,
  knownExitCode,
  runRef,
  unprovided,
} from './containerRunContext.js';
import {
  type ContainerRunEmitted,
  type ContainerRunEvent,
  type ContainerRunInput,
  type ContainerRunOutput,
  clockNow,
  type ObserveRequest,
  type RunRef,
  type StartRunInput,
  validateContainerRunInput,
} from './containerRunTypes.js';

export type { ContainerRunContext, LastObservation } from './containerRunContext.js';
export * from './containerRunTypes.js';

/**
 * The ContainerRun statechart. Provide its four I/O actions, then run it with
 * `createActor(containerRunMachine.provide({ actions }), { input })`; its
 * `output` is a `ContainerRunOutput`. Output chunks of an owned run are
 * emitted as `{ type: 'roundtable.run.output', sessionId, chunk }`.
 */
export const containerRunMachine = setup({
  types: {
    input: {} as ContainerRunInput,
    context: {} as ContainerRunContext,
    events: {} as ContainerRunEvent,
    emitted: {} as ContainerRunEmitted,
    output: {} as ContainerRunOutput,
  },
  actions: {
    // The I/O, provided: each answers with its `.done` / `.error` event.
    startRun: unprovided<StartRunInput>('startRun', (error) => ({
      type: 'roundtable.run.startRun.error',
      error,
    })),
    attach: unprovided<RunRef>('attach', (error) => ({
      type: 'roundtable.run.attach.error',
      error,
    })),
    observe: unprovided<ObserveRequest>('observe', (error, { seq }) => ({
      type: 'roundtable.run.observe.error',
      seq,
      error,
    })),
    readOutput: unprovided<RunRef>('readOutput', (error) => ({
      type: 'roundtable.run.readOutput.error',
      error,
    })),
    // Live output while adopting, provided and optional (default: none): a
    // backend that cannot follow an adopted run shows its output when it
    // ends. `follow` starts it (chunks come back as roundtable.run.output),
    // `unfollow` stops it when the adoption ends, however it ends.
    follow: (_: unknown, _params: RunRef) => {},
    unfollow: (_: unknown, _params: { sessionId: string }) => {},
    startAdoptionClock: assign({ adoptionStartedAt: ({ system }) => clockNow(system._clock) }),
    forwardChunk: emit(({ context, event }) => ({
      type: 'roundtable.run.output' as const,
      sessionId: context.sessionId,
      chunk: event.type === 'roundtable.run.output' ? event.chunk : '',
    })),
    recordFailedRead: assign(({ context, event, system }) =>
      failedRead(context, event, system._clock),
    ),
    recordFailedObservation: assign(({ context, event, system }) => ({
      observations: context.observations + 1,
      lastObservation: {
        failed: true as const,
        // An `after` timeout has no error of its own; name the deadline instead.
        error:
          'error' in event
            ? event.error
            : new Error(`observe took longer than ${context.ioTimeoutMs} ms`),
      },
      // A failed look is "unknown": never replacement, and the clock keeps running.
      decision: decideNow(context, null, system._clock),
    })),
  },
  delays: {
    pollMs: ({ context }) => context.pollMs,
    ioTimeoutMs: ({ context }) => context.ioTimeoutMs,
    outputReadAgainMs: ({ context }) =>
      context.outputReadDecision?.kind === 'read_again' ? context.outputReadDecision.inMs : 0,
  },
  guards: {
    isAdopting: ({ context }) => context.mode === 'adopt',
    markerSeen: ({ context }) =>
      context.lastObservation?.failed === false && context.lastObservation.marker !== null,
    policySaysGiveUp: ({ context }) => context.decision?.kind === 'give_up',
    outputReadAgain: ({ context }) => context.outputReadDecision?.kind === 'read_again',
    // The answer to the look in flight, not to one that timed out before it.
    currentLook: ({ context, event }) => 'seq' in event && event.seq === context.observations,
  },
}).createMachine({
  id: 'containerRun',
  // Every key written out: a spread of the checked input followed by more
  // keys takes V8's slow path (~15 µs per run, once per job).
  context: ({ input }) => {
    const v = validateContainerRunInput(input);
    return {
      sessionId: v.sessionId,
      mode: v.mode,
      handle: v.handle,
      sessionStartedAt: v.sessionStartedAt,
      pollMs: v.pollMs,
      budgetMs: v.budgetMs,
      ioTimeoutMs: v.ioTimeoutMs,
      adoptionStartedAt: null,
      observations: 0,
      lastObservation: null,
      decision: null,
      outputReadFailures: 0,
      outputReadFailedAt: null,
      outputReadDecision: null,
      outputReadFailure: null,
      exitCode: null,
      attachError: null,
      result: null,
    };
  },
  initial: 'choosingPath',
  output: ({ context }) => {
    if (context.result === null) throw new Error('containerRun: finished without a result');
    return context.result;
  },
  states: {
    choosingPath: {
      always: [{ guard: 'isAdopting', target: 'adopting' }, { target: 'starting' }],
    },
    starting: {
      entry: { type: 'startRun', params: ({ context }) => ({ sessionId: context.sessionId }) },
      on: {
        'roundtable.run.startRun.done': {
          target: 'attached',
          actions: assign(({ event }) => ({
            handle: event.output.handle,
            sessionStartedAt: event.output.startedAt,
          })),
        },
        'roundtable.run.startRun.error': {
          target: 'failed',
          actions: assign({
            result: ({ event }) => failure('START_FAILED', 'startRun failed', event.error, null),
          }),
        },
      },
      after: {
        ioTimeoutMs: {
          target: 'failed',
          actions: assign({
            result: ({ context }) =>
              failure(
                'START_TIMED_OUT',
                `startRun took longer than ${context.ioTimeoutMs} ms`,
                null,
                null,
              ),
          }),
        },
      },
    },
    attached: {
      entry: { type: 'attach', params: ({ context }) => runRef(context) },
      on: {
        'roundtable.run.output': { actions: 'forwardChunk' },
        'roundtable.run.exited': {
          target: 'readingOutput',
          actions: assign({ exitCode: ({ event }) => event.exitCode }),
        },
        // The exec stream broke but the command may still be running: the
        // marker will tell, so fall back to polling under the same budget.
        'roundtable.run.attach.error': {
          target: 'adopting',
          actions: assign({ attachError: ({ event }) => event.error }),
        },
      },
    },
    adopting: {
      entry: ['startAdoptionClock', { type: 'follow', params: ({ context }) => runRef(context) }],
      exit: { type: 'unfollow', params: ({ context }) => ({ sessionId: context.sessionId }) },
      // The output as it is written, for as long as the adoption lasts (as
      // long as the run: the marker ends it).
      on: { 'roundtable.run.output': { actions: 'forwardChunk' } },
      // Observe at once: a replaced container or a finished run is known
      // without waiting a poll interval (the incident was decidable at 0 ms).
      initial: 'observing',
      states: {
        observing: {
          entry: {
            type: 'observe',
            params: ({ context }) => ({ ...runRef(context), seq: context.observations }),
          },
          on: {
            'roundtable.run.observe.done': {
              guard: 'currentLook',
              target: 'deciding',
              actions: assign(({ context, event, system }) => ({
                observations: context.observations + 1,
                lastObservation: { failed: false as const, ...event.output },
                exitCode: event.output.marker?.exitCode ?? null,
                // Re-read on every look, never sampled once: a deploy can
                // replace (or someone remove) the container while the
                // adoption is under way.
                decision: decideNow(
                  context,
                  event.output.containerStartedAt,
                  system._clock,
                  event.output.gone === true,
                ),
              })),
            },
            'roundtable.run.observe.error': {
              guard: 'currentLook',
              target: 'deciding',
              actions: 'recordFailedObservation',
            },
          },
          after: { ioTimeoutMs: { target: 'deciding', actions: 'recordFailedObservation' } },
        },
        deciding: {
          // The marker wins over both give-up reasons: it is written last, in
          // the container we just looked at, so the run is complete there.
          always: [
            { guard: 'markerSeen', target: '#containerRun.readingOutput' },
            { guard: 'policySaysGiveUp', target: '#containerRun.gaveUp' },
            { target: 'waiting' },
          ],
        },
        waiting: {
          after: { pollMs: { target: 'observing' } },
        },
      },
    },
    // The run has exited: its output is in the container, which outlives
    // the exit, so an engine that cannot answer right now is asked again
    // (outputReadPolicy.ts) rather than the run finished without it.
    readingOutput: {
      initial: 'reading',
      states: {
        reading: {
          entry: { type: 'readOutput', params: ({ context }) => runRef(context) },
          on: {
            'roundtable.run.readOutput.done': {
              target: '#containerRun.exited',
              actions: assign({
                result: ({ context, event }) => ({
                  outcome: 'exited' as const,
                  exitCode: knownExitCode(context),
                  output: event.output,
                }),
              }),
            },
            'roundtable.run.readOutput.error': {
              target: 'readFailed',
              actions: 'recordFailedRead',
            },
          },
          after: { ioTimeoutMs: { target: 'readFailed', actions: 'recordFailedRead' } },
        },
        readFailed: {
          always: [
            { guard: 'outputReadAgain', target: 'waitingToRead' },
            {
              target: '#containerRun.failed',
              actions: assign({ result: ({ context }) => context.outputReadFailure }),
            },
          ],
        },
        // A late answer to the read that failed is not taken here: only
        // `reading` takes answers, and the file is complete once the marker
        // is there, so the next read's answer is as good.
        waitingToRead: {
          after: { outputReadAgainMs: { target: 'reading' } },
        },
      },
    },
    exited: { type: 'final' },
    gaveUp: {
      type: 'final',
      entry: assign({
        result: ({ context }) => ({
          outcome: 'gave_up' as const,
          reason: context.decision?.kind === 'give_up' ? context.decision.reason : 'timeout',
        }),
      }),
    },
    failed: { type: 'final' },
  },
});
