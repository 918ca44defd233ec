/**
 * Starting one incarnation of a child, as OTP's `do_start_child`: spawn it
 * from its spec, claim its registered name (a name already taken fails the
 * start, as `{already_started, Pid}` does), then mark the record running and
 * tell the tree's listeners. The Supervisor calls it for its initial
 * children, for `startChild` and for every restart.
 */
import type { ChildRecord, ChildTable } from './ChildTable.js';
import { claimName } from './childNames.js';
import type { ResolvedChildSpec } from './childSpec.js';
import { ChildStartError } from './errors.js';
import type { ExitReason } from './exitReason.js';
import type { shellObserver } from './inspectionGate.js';
import { noteInspected } from './monitorInspection.js';
import type { SupervisorOutbox } from './SupervisorOutbox.js';
import { type ExitSink, type NestedFactory, type Spawned, spawnChild } from './spawnChild.js';
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

/**
 * A child `startChild` adds, started: its record joins the table and its
 * first incarnation starts. One that fails to start is not kept, as OTP's
 * `start_child` adds no child on `{error, _}`: the record is removed again
 * and this throws a `ChildStartError`.
 */
export function startAddedChild(
  children: ChildTable,
  spec: ResolvedChildSpec,
  deps: IncarnationDeps,
): Spawned {
  const child = children.add(spec, 'logic' in spec.start ? spec.start.input : undefined);
  const failure = startIncarnation(child, deps);
  // startIncarnation sets child.spawned exactly when it returns no failure.
  const spawned = child.spawned;
  if (failure || spawned === undefined) {
    children.remove(spec.id);
    throw new ChildStartError(spec.id, failure ?? 'noproc');
  }
  return spawned;
}
