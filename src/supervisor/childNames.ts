/**
 * A supervised child's registered `name`, across its incarnations: claimed
 * at every (re)start, freed by its holder's exit (Registry) or, for what is
 * left, when the supervisor exits.
 */
import type { ChildRecord } from './ChildTable.js';
import type { ExitReason } from './exitReason.js';
import type { Registry } from './Registry.js';
import type { Watchable } from './watchExit.js';

/**
 * Binds `name` to a new incarnation. A name another live actor holds is
 * OTP's `{error, already_started}`: returned as the start's failure reason
 * (counted like any failed start), never thrown out of a restart job.
 */
export function claimName(
  registry: Registry | undefined,
  name: string | undefined,
  ref: Watchable,
): ExitReason | undefined {
  if (!name || !registry) return undefined;
  try {
    registry.register(name, ref);
    return undefined;
  } catch (error) {
    return { error };
  }
}

/**
 * Frees the names of an exited supervisor's children. They are all stopped
 * by now, so a live holder of one is someone else's (it took the name while
 * a restart waited): not ours to free.
 */
export function releaseNames(
  registry: Registry | undefined,
  children: Iterable<ChildRecord>,
): void {
  if (!registry) return;
  for (const c of children) {
    const name = c.spec.name;
    if (name && registry.whereis(name) === undefined) registry.unregister(name);
  }
}
