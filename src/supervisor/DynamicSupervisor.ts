/**
 * A dynamic supervisor, as Elixir's DynamicSupervisor: no children at start,
 * `one_for_one`, children added with `startChild` (a spec, or extra start
 * arguments for its template) up to `maxChildren`.
 */
import type { ChildSpec } from './childSpec.js';
import type { Supervisor } from './Supervisor.js';
import { startSupervisor } from './startSupervisor.js';
import type { SupervisorRuntime, SupervisorSpec } from './supervisorSpec.js';

export interface DynamicSupervisorSpec {
  id?: string;
  maxChildren?: number;
  intensity?: number;
  periodMs?: number;
  /** What `startChild({ id, input })` starts; the input is merged over the template's. */
  template?: ChildSpec;
}

/** The nestable spec of a dynamic supervisor (for a parent's child spec). */
export function dynamicSupervisorSpec(spec: DynamicSupervisorSpec = {}): SupervisorSpec {
  return { ...spec, children: [], strategy: 'one_for_one' };
}

export function startDynamicSupervisor(
  spec: DynamicSupervisorSpec = {},
  runtime: Partial<SupervisorRuntime> = {},
): Promise<Supervisor> {
  return startSupervisor(dynamicSupervisorSpec(spec), runtime);
}
