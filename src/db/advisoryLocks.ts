/**
 * Postgres advisory lock keys used by roundtable, in one place so two
 * features can never pick the same number by accident. Keys are in the
 * two-int4 form (namespace, lock): the namespace is 'rtbl' as an int4.
 */

/** 'rtbl' in ASCII, read as a big-endian int4: roundtable's advisory lock namespace. */
export const LOCK_NAMESPACE = 0x7274626c;

/** Every advisory lock roundtable takes. */
export const ADVISORY_LOCKS = {
  /** Held while migrations run, so nodes starting together migrate once. */
  migrate: 1,
  /** Held by a slot claim while it counts running rows against the caps. */
  claimSlot: 2,
  /** Held by the one Reconciler allowed to act at a time (issue: Reconciler). */
  reconciler: 3,
} as const;

export type AdvisoryLockName = keyof typeof ADVISORY_LOCKS;
