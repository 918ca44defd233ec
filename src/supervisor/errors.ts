/**
 * The supervisor layer's typed errors. Each has a stable `code`; the ones
 * raised by a child's failure keep it as `cause`.
 */
import { describeExitReason, type ExitReason } from './exitReason.js';

/** Base class so callers can catch every supervisor error at once. */
export abstract class SupervisorError extends Error {
  abstract readonly code: string;
}

/** A child spec (or supervisor option) is invalid; `field` names the bad one. */
export class ChildSpecError extends SupervisorError {
  readonly code = 'INVALID_CHILD_SPEC';
  override readonly name = 'ChildSpecError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`invalid child spec: ${field}: ${message}`);
  }
}

/** A child failed to start; the supervisor's own start fails with this. */
export class ChildStartError extends SupervisorError {
  readonly code = 'CHILD_START_FAILED';
  override readonly name = 'ChildStartError';
  constructor(
    readonly childId: string,
    readonly reason: ExitReason,
  ) {
    super(`child ${childId} failed to start: ${describeExitReason(reason)}`, {
      cause: typeof reason === 'object' && 'error' in reason ? reason.error : undefined,
    });
  }
}

/** Two children with one id, or a registry name already held. */
export class AlreadyStartedError extends SupervisorError {
  readonly code = 'ALREADY_STARTED';
  override readonly name = 'AlreadyStartedError';
  constructor(readonly key: string) {
    super(`already started: ${key}`);
  }
}

/**
 * A child asked for as the other kind: `child(id)` of a supervisor child,
 * `childSupervisor(id)` of a worker, or a template start of the wrong kind.
 */
export class ChildTypeError extends SupervisorError {
  readonly code = 'WRONG_CHILD_TYPE';
  override readonly name = 'ChildTypeError';
  constructor(
    readonly childId: string,
    readonly type: 'worker' | 'supervisor',
  ) {
    super(
      `child ${childId} is a ${type}: ask ${type === 'worker' ? 'child' : 'childSupervisor'}(${JSON.stringify(childId)})`,
    );
  }
}

/** A dynamic supervisor already runs `maxChildren` children. */
export class MaxChildrenError extends SupervisorError {
  readonly code = 'MAX_CHILDREN';
  override readonly name = 'MaxChildrenError';
  constructor(readonly maxChildren: number) {
    super(`supervisor is full: maxChildren ${maxChildren} reached`);
  }
}

/** The target (actor, name or supervisor) is not alive. */
export class NoProcError extends SupervisorError {
  readonly code = 'NOPROC';
  override readonly name = 'NoProcError';
  constructor(readonly target: string) {
    super(`no process: ${target}`);
  }
}

/** No child with that id. */
export class NotFoundError extends SupervisorError {
  readonly code = 'NOT_FOUND';
  override readonly name = 'NotFoundError';
  constructor(readonly childId: string) {
    super(`no child with id ${childId}`);
  }
}

/** `call` got no reply before its deadline. */
export class CallTimeoutError extends SupervisorError {
  readonly code = 'CALL_TIMEOUT';
  override readonly name = 'CallTimeoutError';
  constructor(
    readonly callRef: string,
    readonly timeoutMs: number,
  ) {
    super(`call ${callRef} got no reply within ${timeoutMs} ms`);
  }
}

/** The target of a `call` exited (or was never alive) before replying. */
export class CallExitError extends SupervisorError {
  readonly code = 'CALL_TARGET_EXITED';
  override readonly name = 'CallExitError';
  constructor(
    readonly callRef: string,
    readonly reason: ExitReason,
  ) {
    super(`call ${callRef}: target exited: ${describeExitReason(reason)}`, {
      cause: typeof reason === 'object' && 'error' in reason ? reason.error : undefined,
    });
  }
}

/**
 * A `subscribe` or `onExit` listener threw. The supervisor goes on (the event
 * was delivered to every other listener, the restart it announced still
 * happens) and hands this to the runtime's `onError`; `cause` is the throw.
 */
export class ListenerError extends SupervisorError {
  readonly code = 'LISTENER_FAILED';
  override readonly name = 'ListenerError';
  constructor(
    readonly supervisorId: string,
    /** The event type the listener was given, or `exit` for an `onExit` listener. */
    readonly eventType: string,
    cause: unknown,
  ) {
    super(`a listener of supervisor ${supervisorId} threw on ${eventType}`, { cause });
  }
}

/**
 * The inspection observer (the runtime's `inspect`, or an inspector gate's)
 * threw on a frame. XState calls it inside the actor's own step, where a
 * throw would fail that actor (at boot: the whole tree's start); the frame
 * is dropped instead, the actor goes on, and this goes to `onError`.
 */
export class InspectObserverError extends SupervisorError {
  readonly code = 'INSPECT_OBSERVER_FAILED';
  override readonly name = 'InspectObserverError';
  constructor(
    /** The inspection event's type (`@xstate.event`, `@xstate.snapshot`, ...). */
    readonly eventType: string,
    cause: unknown,
  ) {
    super(`the inspection observer threw on ${eventType}`, { cause });
  }
}

/**
 * One of the supervisor's own jobs (an exit, a restart, a shutdown step)
 * threw or rejected: a fault in the supervisor or in what its runtime
 * injects (registry, clock, random). The supervisor crashes, as an OTP
 * supervisor would, and its parent decides; this goes to `onError`.
 */
export class SupervisorJobError extends SupervisorError {
  readonly code = 'SUPERVISOR_JOB_FAILED';
  override readonly name = 'SupervisorJobError';
  constructor(
    readonly supervisorId: string,
    cause: unknown,
  ) {
    super(`a job of supervisor ${supervisorId} failed; the supervisor exits`, { cause });
  }
}
