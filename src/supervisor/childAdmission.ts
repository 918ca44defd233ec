/**
 * Which child specs a supervisor takes, checked before anything starts (as
 * OTP's `check_childspecs`): each spec valid and fit for this supervisor,
 * the initial ids unique, and a later `startChild` within `maxChildren`, of
 * the type the caller asked for, under an id not already taken. Throws the
 * typed error of the first check that fails; starts nothing.
 */
import type { ChildTable } from './ChildTable.js';
import { type ChildSpec, type ResolvedChildSpec, validateChildSpec } from './childSpec.js';
import { AlreadyStartedError, ChildSpecError, ChildTypeError, MaxChildrenError } from './errors.js';
import { fromTemplate, type StartArgs } from './fromTemplate.js';
import type { ResolvedSupervisorSpec } from './supervisorSpec.js';

/** `spec` validated, and fit for `sup`: a significant child needs `autoShutdown`. */
export function admitChildSpec(spec: unknown, sup: ResolvedSupervisorSpec): ResolvedChildSpec {
  const resolved = validateChildSpec(spec);
  if (resolved.significant && sup.autoShutdown === 'never') {
    throw new ChildSpecError('significant', "needs the supervisor's autoShutdown to be set");
  }
  return resolved;
}

/** The initial children's specs, in start order, every one admitted and no id twice. */
export function admitInitialChildren(sup: ResolvedSupervisorSpec): ResolvedChildSpec[] {
  const specs = sup.children.map((c) => admitChildSpec(c, sup));
  const seen = new Set<string>();
  for (const s of specs) {
    if (seen.has(s.id)) throw new ChildSpecError('id', `duplicate child id ${s.id}`);
    seen.add(s.id);
  }
  return specs;
}

export interface StartedChildRequest {
  /** A full spec, or extra start arguments for the supervisor's template. */
  specOrArgs: ChildSpec | StartArgs;
  /** The type the caller's overload promised, if it promised one. */
  want: 'worker' | 'supervisor' | undefined;
  /** Numbers a generated id; called once per template start, failed ones included. */
  nextSeq(): number;
}

/** The spec a `startChild` call starts next to the `children` already there. */
export function admitStartedChild(
  sup: ResolvedSupervisorSpec,
  children: ChildTable,
  request: StartedChildRequest,
): ResolvedChildSpec {
  const { specOrArgs, want } = request;
  if (children.size >= sup.maxChildren) throw new MaxChildrenError(sup.maxChildren);
  // A full spec is its own id: fromTemplate reads no seq for it.
  const seq = 'start' in specOrArgs ? 0 : request.nextSeq();
  const spec = admitChildSpec(fromTemplate(sup.template, specOrArgs, seq), sup);
  if (want !== undefined && spec.type !== want) throw new ChildTypeError(spec.id, spec.type);
  if (children.has(spec.id)) throw new AlreadyStartedError(spec.id);
  return spec;
}
