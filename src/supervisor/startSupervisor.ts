/**
 * The entry point of a tree, as OTP's `supervisor:start_link`: the
 * supervisor starts its children in order, and a child that fails to start
 * fails the whole start, after the ones already started were stopped.
 */
import { ChildStartError } from './errors.js';
import { Supervisor } from './Supervisor.js';
import { resolveRuntime, type SupervisorRuntime, type SupervisorSpec } from './supervisorSpec.js';

/**
 * Starts a supervisor and its children in order. If a child fails to start,
 * the ones already started are stopped in reverse order and the returned
 * promise rejects with a `ChildStartError` naming the child.
 */
export async function startSupervisor(
  spec: SupervisorSpec,
  runtime: Partial<SupervisorRuntime> = {},
): Promise<Supervisor> {
  const sup = new Supervisor(spec, resolveRuntime(runtime));
  const started = sup.startInitial();
  if (!started.ok) {
    await sup.shutdown();
    throw new ChildStartError(started.childId, started.reason);
  }
  return sup;
}
