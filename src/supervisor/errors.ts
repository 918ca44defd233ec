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
