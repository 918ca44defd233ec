/**
 * Whether a node starting now agrees with the caps the cluster's ticks last
 * applied. Every granting tick applies its own node's caps before it grants,
 * so nodes configured apart take turns deciding the cluster's caps: the
 * global cap is whichever granted last. A rolling deploy that changes the
 * caps passes through that on purpose; a node started with other flags by
 * mistake does not, and nothing else would say so.
 */

import type { EnforcedCaps } from '../db/index.js';
import type { CliConfig } from './cliConfig.js';

/**
 * The warning a starting node logs when its caps are not those in force
 * (null: they agree, or no tick has written any yet). Pure.
 *
 * @example
 * ```ts
 * capsNotice(null, { maxRunning: 4, defaultUserCap: 2 }) // => null
 * capsNotice({ globalCap: 4, defaultUserCap: 2 }, { maxRunning: 4, defaultUserCap: 2 }) // => null
 * capsNotice({ globalCap: 2, defaultUserCap: 1 }, { maxRunning: 4, defaultUserCap: 2 }) // => 'the caps in force are 2 runners, 1 per user; this node grants under 4 runners, 2 per user from its first tick, and the other nodes under theirs: configure every node alike (a rolling deploy that changes them passes through this)'
 * ```
 */
export function capsNotice(
  inForce: EnforcedCaps | null,
  configured: CliConfig['caps'],
): string | null {
  if (inForce === null) return null;
  if (
    inForce.globalCap === configured.maxRunning &&
    inForce.defaultUserCap === configured.defaultUserCap
  )
    return null;
  return (
    `the caps in force are ${inForce.globalCap} runners, ${inForce.defaultUserCap} per user; ` +
    `this node grants under ${configured.maxRunning} runners, ${configured.defaultUserCap} per user from its first tick, ` +
    'and the other nodes under theirs: configure every node alike (a rolling deploy that changes them passes through this)'
  );
}
