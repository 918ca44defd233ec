/**
 * Starting one incarnation of a child, as OTP's `do_start_child`: spawn it
 * from its spec, claim its registered name (a name already taken fails the
 * start, as `{already_started, Pid}` does), then mark the record running and
 * tell the tree's listeners. The Supervisor calls it for its initial
 * children, for `startChild` and for every restart.
 */
import type { ChildRecord } from './ChildTable.js';
import { claimName } from './childNames.js';
import type { ExitReason } from './exitReason.js';
import type { shellObserver } from './inspectionGate.js';
import { noteInspected } from './monitorInspection.js';
import type { SupervisorOutbox } from './SupervisorOutbox.js';
import { type ExitSink, type NestedFactory, spawnChild } from './spawnChild.js';
import type { SupervisorRuntime } from './supervisorSpec.js';

/** What an incarnation needs from the supervisor that starts it. */
export interface IncarnationDeps {
  supervisorId: string;
  runtime: SupervisorRuntime;
  /** Makes a nested supervisor (the Supervisor class, passed in to keep this file below it). */
  nested: NestedFactory;
  /** Where the incarnation reports its exit; the child record is the token. */
  sink: ExitSink<ChildRecord>;
  /** Who sees this tree's monitors, if anyone. */
  seen: ReturnType<typeof shellObserver>;
  out: SupervisorOutbox;
}

/**
 * Starts `child` once; returns the reason it failed to start, if it did.
 * On success `child.spawned` is set and `child.starts` counts it; on
 * failure the record is `stopped` and nothing is left running.
 */
export function startIncarnation(
  child: ChildRecord,
  deps: IncarnationDeps,
): ExitReason | undefined {
  const { runtime } = deps;
  const result = spawnChild(child.spec, child.input, runtime, deps.nested, deps.sink, child);
  if (!result.ok) {
    child.status = 'stopped';
    return result.reason;
  }
  const taken = claimName(runtime.registry, child.spec.name, result.spawned.ref);
  if (taken) {
    result.spawned.kill();
    child.status = 'stopped';
    return taken;
  }
  child.spawned = result.spawned;
  child.status = 'running';
  child.starts += 1;
  if (deps.seen) noteInspected(result.spawned.ref, deps.seen);
  if (!deps.out.observed) return undefined;
  deps.out.emit({
    type: 'roundtable.child.started',
    supervisorId: deps.supervisorId,
    childId: child.spec.id,
    sessionId: result.spawned.sessionId,
    restartCount: child.starts - 1,
  });
  return undefined;
}
