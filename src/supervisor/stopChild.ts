/**
 * Stopping one child by its shutdown spec, as OTP's `shutdown/2`:
 * `brutal_kill` stops at once; milliseconds asks for a graceful stop and kills
 * at the deadline; `infinity` asks and waits.
 */
import type { ChildRecord } from './ChildTable.js';
import type { SupervisorClock } from './clock.js';
import type { ExitReason } from './exitReason.js';

/** Drops a child's pending delayed restart, if any. */
export function cancelRestartTimer(c: ChildRecord, clock: SupervisorClock): void {
  if (c.timer) clock.clearTimeout(c.timer.id);
  c.timer = undefined;
}

/**
 * Stops one child by its shutdown spec and marks it stopped; `report` gets
 * its id and the reason it ended with. We wait for the child's own exit (not our
 * request) so a child that ignores the request still ends: at the deadline
 * it is killed, and the kill is what we then observe. Returns a promise only
 * when there is something to wait for.
 */
export function stopChild(
  c: ChildRecord,
  clock: SupervisorClock,
  report: (childId: string, reason: ExitReason) => void,
): void | Promise<void> {
  cancelRestartTimer(c, clock);
  c.status = 'stopped';
  const sp = c.spawned;
  if (!sp) return;
  c.spawned = undefined;
  const id = c.spec.id;
  if (c.spec.shutdown === 'brutal_kill') {
    sp.kill();
    report(id, sp.reason ?? 'killed');
    return;
  }
  if (!sp.requestStop()) {
    report(id, sp.reason ?? 'shutdown');
    return;
  }
  const exited = sp.whenExited();
  if (c.spec.shutdown === 'infinity') return exited.then((reason) => report(id, reason));
  const timer = clock.setTimeout(() => sp.kill(), c.spec.shutdown);
  return exited.then((reason) => {
    clock.clearTimeout(timer);
    report(id, reason);
  });
}

/** Stops a child at once (the supervisor is being killed); true if it was running. */
export function killChild(c: ChildRecord, clock: SupervisorClock): boolean {
  cancelRestartTimer(c, clock);
  const sp = c.spawned;
  c.spawned = undefined;
  c.status = 'stopped';
  sp?.kill();
  return sp !== undefined;
}
