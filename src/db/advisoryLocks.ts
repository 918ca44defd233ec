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
  /** Held by the one Reconciler acting at a time, for the length of its pass. */
  reconciler: 3,
} as const;

/**
 * 'rtbb' as an int4: the namespace of boot locks (src/db/bootLock.ts), one
 * per live boot, keyed by a hash of its owner name.
 */
export const BOOT_LOCK_NAMESPACE = 0x72746262;

export type AdvisoryLockName = keyof typeof ADVISORY_LOCKS;
