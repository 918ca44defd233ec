/**
 * After each heartbeat: this boot's runners whose runs another node has
 * fenced (`fencedOut`, src/machines/fencedOut.ts) are stopped, and their
 * slots given back. Their containers are left alone: they are the adopter's
 * runs now. Runners whose rows were cancelled elsewhere (`cancelledElsewhere`)
 * are cancelled here: they stop their runs and give their slots back. One
 * read of a few rows per beat, and none while nothing runs. The feed hands
 * the changed rows it brings to `cancelRunnersCancelledElsewhere` as well.
 */
import { sessionStates } from '../db/index.js';
import type { Db } from '../db/transaction.js';
import { cancelledElsewhere, fencedOut } from '../machines/fencedOut.js';
import type { RunnerStarter } from './runtimeRunners.js';

/** A runner here was stopped: another node took its run. For the logs (not an error of this node). */
export class RunnerFencedOutNotice extends Error {
  override readonly name = 'RunnerFencedOutNotice';
  readonly code = 'RUNNER_FENCED_OUT';
  constructor(
    readonly sessionId: string,
    readonly heldEpoch: number,
    readonly rowEpoch: number,
  ) {
    super(
      `${sessionId}: another node took this run (epoch ${heldEpoch} -> ${rowEpoch}): this boot could not prove it was alive, or the run went on past its time limit here; its runner here is stopped, its container left to the new owner`,
    );
  }
}

export interface FencedOutSweepOptions {
  db: Db;
  starter: Pick<
    RunnerStarter,
    'live' | 'has' | 'startEpoch' | 'stopFencedOut' | 'forgetEnded' | 'tell'
  >;
  /** The epoch the dispatcher holds `sessionId` at (a runner's own adoption moves it on). */
  heldEpoch(sessionId: string): number | undefined;
  /** Stops counting `sessionId` as held here. */
  drop(sessionId: string): void;
  onNotice(notice: RunnerFencedOutNotice): void;
}

/** The newest epoch this boot knows it runs `sessionId` at, or undefined (a runner still adopting). */
function ourEpoch(
  o: Pick<FencedOutSweepOptions, 'starter' | 'heldEpoch'>,
  sessionId: string,
): number | undefined {
  const started = o.starter.startEpoch(sessionId);
  const held = o.heldEpoch(sessionId);
  if (started === undefined) return held;
  return held === undefined ? started : Math.max(started, held);
}

/** The epochs this boot runs `ids` at, for those it runs (a runner still adopting is left out). */
function epochsOf(o: Pick<FencedOutSweepOptions, 'starter' | 'heldEpoch'>, ids: Iterable<string>) {
  const ours = new Map<string, number>();
  for (const id of ids) {
    const epoch = ourEpoch(o, id);
    if (epoch !== undefined) ours.set(id, epoch);
  }
  return ours;
}

/**
 * Tells each runner here whose row `rows` shows cancelled at the epoch this
 * boot runs it at to cancel, as a local cancel does (a runner already ending
 * ignores it). The rows come from the beat's read, or from the changes the
 * feed brings: a cancel made through another node, or by the CLI, then
 * reaches the runner within a tick of the feed instead of a heartbeat (a
 * cancelled row is final, so a row the feed brings late is still true).
 * Returns the ids told.
 */
export function cancelRunnersCancelledElsewhere(
  o: Pick<FencedOutSweepOptions, 'starter' | 'heldEpoch'>,
  rows: ReadonlyMap<string, { epoch: number; status: string }>,
): string[] {
  const ours = epochsOf(
    o,
    [...rows.keys()].filter((id) => o.starter.has(id)),
  );
  const told = cancelledElsewhere(ours, rows);
  for (const id of told) o.starter.tell(id, { type: 'roundtable.runner.cancel' });
  return told;
}

/** One sweep: the ids of the runners it stopped. */
export async function sweepFencedOut(o: FencedOutSweepOptions): Promise<string[]> {
  o.starter.forgetEnded();
  const ours = epochsOf(o, o.starter.live());
  if (ours.size === 0) return [];
  const states = await sessionStates(o.db, [...ours.keys()]);
  cancelRunnersCancelledElsewhere(o, states);
  const rows = new Map([...states].map(([id, r]) => [id, r.epoch]));
  const stopped: string[] = [];
  for (const id of fencedOut(ours, rows)) {
    const row = rows.get(id) as number;
    // Our epoch is judged again in the turn the stop is posted: a fence of
    // this boot's own since the read (the run came back here) moved it on.
    const was = await o.starter.stopFencedOut(id, row, () => ourEpoch(o, id));
    if (was === undefined) continue;
    const held = o.heldEpoch(id);
    if (held !== undefined && held < row) o.drop(id);
    stopped.push(id);
    o.onNotice(new RunnerFencedOutNotice(id, was, row));
  }
  return stopped;
}
