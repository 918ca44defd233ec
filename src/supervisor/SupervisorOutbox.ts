/**
 * Everything a supervisor tells others: its system events (to `subscribe`
 * listeners and to its inspection shell) and its exit (to `onExit`
 * listeners). Each listener is called guarded, because the supervisor calls
 * them from inside its own jobs: what one throws goes to the runtime's
 * `onError` as a `ListenerError`, and the job goes on.
 */
import type { AnyActorRef } from 'xstate';
import { ListenerError, type SupervisorError } from './errors.js';
import type { SupervisorEvent } from './events.js';
import type { ExitReason } from './exitReason.js';
import { callGuarded, Listeners, reportError } from './Listeners.js';

export class SupervisorOutbox {
  readonly events: Listeners<SupervisorEvent>;
  readonly exits: Listeners<ExitReason>;

  constructor(
    private readonly supervisorId: string,
    /** The inspection shell; its `send` runs the user's `inspect` observer. */
    private readonly shell: AnyActorRef | undefined,
    private readonly onError: (error: SupervisorError) => void,
  ) {
    this.events = new Listeners((error, event) => this.threw(event.type, error));
    this.exits = new Listeners((error) => this.threw('exit', error));
  }

  /** Whether anyone sees events: building them is skipped otherwise. */
  get observed(): boolean {
    return this.shell !== undefined || this.events.size > 0;
  }

  emit(event: SupervisorEvent): void {
    if (this.shell) callGuarded(this.sendToShell, event, this.shellThrew);
    this.events.emit(event);
  }

  /** Tells every `onExit` listener, once. */
  exited(reason: ExitReason): void {
    this.exits.emit(reason);
    this.exits.clear();
  }

  /** An `onExit` registered after the exit: told on a microtask, like a DOWN. */
  tellLate(listener: (reason: ExitReason) => void, reason: ExitReason): void {
    queueMicrotask(() => callGuarded(listener, reason, (error) => this.threw('exit', error)));
  }

  private readonly sendToShell = (event: SupervisorEvent): void => {
    this.shell?.send(event);
  };

  private readonly shellThrew = (error: unknown, event: SupervisorEvent): void =>
    this.threw(event.type, error);

  /** Hands an error nobody else can take to the runtime's `onError`. */
  report(error: SupervisorError): void {
    reportError(this.onError, error);
  }

  private threw(eventType: string, error: unknown): void {
    this.report(new ListenerError(this.supervisorId, eventType, error));
  }
}
