/**
 * Which of this boot's runners another node has fenced out: the ones whose
 * row's epoch has moved past the epoch this boot holds the session at.
 *
 * Every adoption moves a row's epoch on (the compare-and-set fences the
 * previous owner), and nothing but a transition this boot makes moves it
 * while the boot still owns the run. So a row ahead of the held epoch was
 * taken: this boot lost its lock for a while, or was judged dead by its
 * stale beats, and another node adopted the run. Its runner would learn it
 * only at its next write, which for a run of hours is hours of a slot held
 * here for a run that is somebody else's. A row at the held epoch, or with
 * no row (never read, or gone), is left alone.
 *
 * Pure: the caller reads the epochs (`sessionEpochs`) and stops the runners.
 *
 * @example
 * ```ts
 * const held = new Map([['ses_a', 3], ['ses_b', 5], ['ses_c', 1]]);
 * fencedOut(held, new Map([['ses_a', 3], ['ses_b', 6]])) // => ['ses_b']
 * fencedOut(held, new Map([['ses_a', 4], ['ses_b', 5], ['ses_c', 9]])) // => ['ses_a', 'ses_c']
 * fencedOut(held, new Map()) // => []
 * fencedOut(new Map(), new Map([['ses_a', 4]])) // => []
 * ```
 */
export function fencedOut(
  held: ReadonlyMap<string, number>,
  rowEpochs: ReadonlyMap<string, number>,
): string[] {
  const out: string[] = [];
  for (const [id, epoch] of held) {
    const row = rowEpochs.get(id);
    if (row !== undefined && row > epoch) out.push(id);
  }
  return out;
}

/**
 * Which of this boot's runners run a session another node (or the CLI)
 * cancelled: the row says `cancelled` at the epoch this boot holds it at. A
 * cancel leaves the epoch where it was, so `fencedOut` does not see it; the
 * canceller removes the container when it can reach it, and otherwise the
 * runner here would hold its slot until its run ended, for a run of hours
 * hours of a slot. Such a runner is cancelled here as a local cancel would:
 * it stops its run and gives its slot back. A row fenced past the held
 * epoch is `fencedOut`'s, not this.
 *
 * @example
 * ```ts
 * const held = new Map([['ses_a', 3], ['ses_b', 5], ['ses_c', 1]]);
 * const rows = new Map([['ses_a', { epoch: 3, status: 'cancelled' }], ['ses_b', { epoch: 5, status: 'running' }], ['ses_c', { epoch: 2, status: 'cancelled' }]]);
 * cancelledElsewhere(held, rows) // => ['ses_a']
 * cancelledElsewhere(held, new Map()) // => []
 * ```
 */
export function cancelledElsewhere(
  held: ReadonlyMap<string, number>,
  rows: ReadonlyMap<string, { epoch: number; status: string }>,
): string[] {
  const out: string[] = [];
  for (const [id, epoch] of held) {
    const row = rows.get(id);
    if (row !== undefined && row.status === 'cancelled' && row.epoch === epoch) out.push(id);
  }
  return out;
}

/**
 * What this boot does with a run whose handle the tick refused: the row was
 * no longer `running` at the epoch this boot started it at. The start and the
 * row can cross: a node judged dead while its start was under way (a stall
 * longer than the liveness window) has its row failed and re-queued by the
 * Reconciler, which found no container yet; the container then comes up and
 * would run the command beside the next attempt until a sweep found it.
 * - `cancel`: the row ended elsewhere (failed and re-queued, cancelled): the
 *   run is nobody's. Stopped as a cancel stops it: the container goes, the
 *   slot is given back. One tick after the start, not at the next pass.
 * - `fenced`: another node adopted the row (a later epoch, still running);
 *   it may be adopting this very container, found by name. The runner is
 *   stopped and the container left to it, as `fencedOut` does.
 * - `keep`: nothing says the run is someone else's.
 *
 * @example
 * ```ts
 * afterRefusedHandle(3, { status: 'failed', epoch: 3 }) // => 'cancel'
 * afterRefusedHandle(3, { status: 'cancelled', epoch: 3 }) // => 'cancel'
 * afterRefusedHandle(3, { status: 'running', epoch: 4 }) // => 'fenced'
 * afterRefusedHandle(3, { status: 'running', epoch: 3 }) // => 'keep'
 * ```
 */
export function afterRefusedHandle(
  ours: number,
  actual: { status: string; epoch: number },
): 'cancel' | 'fenced' | 'keep' {
  if (actual.status !== 'running') return 'cancel';
  return actual.epoch > ours ? 'fenced' : 'keep';
}
