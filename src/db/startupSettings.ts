/**
 * The server-side deadlines a connection sends in its startup packet, and
 * whether the server really holds them. A pooler may accept them and drop
 * them (PgBouncer with `ignore_startup_parameters` listing them, in session
 * mode too, where the session probe passes): the node then runs with the
 * role's settings, often none, and a statement that hangs keeps its locks
 * (the tick's among them) until the client deadline gives up on it, which
 * does not stop it on the server. Checked in connect's first round trip,
 * which it replaces, so it costs nothing.
 */

/** What the server calls each deadline, and the option it comes from. */
export const STARTUP_DEADLINES = {
  statement_timeout: 'statementTimeoutMs',
  lock_timeout: 'lockTimeoutMs',
  idle_in_transaction_session_timeout: 'idleInTransactionTimeoutMs',
} as const;

export type StartupSetting = keyof typeof STARTUP_DEADLINES;

/**
 * The settings a connection sends: each deadline that is not 0 (0 sends
 * nothing and leaves the server's own), by the server's name, in ms.
 *
 * @example
 * ```ts
 * sentSettings({ statementTimeoutMs: 15000, lockTimeoutMs: 0, idleInTransactionTimeoutMs: 0 }) // => { statement_timeout: 15000 }
 * Object.keys(sentSettings({ statementTimeoutMs: 1, lockTimeoutMs: 1, idleInTransactionTimeoutMs: 1 })).length // => 3
 * ```
 */
export function sentSettings(o: {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}): Partial<Record<StartupSetting, number>> {
  const sent: Partial<Record<StartupSetting, number>> = {};
  for (const [name, option] of Object.entries(STARTUP_DEADLINES) as [
    StartupSetting,
    keyof typeof o,
  ][])
    if (o[option] > 0) sent[name] = o[option];
  return sent;
}

/**
 * The sent settings the server does not hold, given its `pg_settings` rows
 * (`setting` is in ms for these three): sorted names, empty when all hold.
 *
 * @example
 * ```ts
 * notInForce({ statement_timeout: 15000 }, [{ name: 'statement_timeout', setting: '15000' }]) // => []
 * const dropped = [{ name: 'statement_timeout', setting: '0' }, { name: 'lock_timeout', setting: '0' }]
 * notInForce({ statement_timeout: 15000, lock_timeout: 5000 }, dropped) // => ['lock_timeout', 'statement_timeout']
 * notInForce({ lock_timeout: 5000 }, []) // => ['lock_timeout']
 * ```
 */
export function notInForce(
  sent: Partial<Record<StartupSetting, number>>,
  shown: readonly { name: string; setting: string }[],
): StartupSetting[] {
  const held = new Map(shown.map((r) => [r.name, r.setting]));
  return (Object.keys(sent) as StartupSetting[])
    .filter((name) => held.get(name) !== String(sent[name]))
    .sort();
}
