/**
 * A running row with no handle: its owner died after the backend's `start`
 * began and before the handle's write committed (the write rides the next
 * tick, so the window is a tick long), or before `start` created anything.
 * Re-queueing it blind would run the command a second time next to the
 * first; so the run is looked for under the name `start` gives it
 * (`backend.handleOf`), and what is found there says whether the command
 * began: an exit marker, or the output file, which the wrapper's `tee`
 * creates before the command can write anything.
 */
import type { ContainerBackend, Presence } from '../containers/ContainerBackend.js';
import { isContainerError } from '../containers/ContainerError.js';

/** What the Reconciler knows of a handle-less run after looking for it. */
export interface UnrecordedRun {
  /** The name it was looked for under; null when the backend cannot know it. */
  handle: string | null;
  presence: Presence;
  /** Whether the command began there; set only when the run is present and the engine said. */
  begun?: boolean;
  /** The container's start: an upper bound of the exec's, kept as the row's `startedAt`. */
  containerStartedAt: Date | null;
}

const nothing: UnrecordedRun = { handle: null, presence: 'absent', containerStartedAt: null };

/** Looks for the run of a handle-less row; never throws (an engine fault is `unknown`). */
export async function findUnrecorded(
  backend: ContainerBackend,
  sessionId: string,
): Promise<UnrecordedRun> {
  let handle: string | null;
  try {
    handle = backend.handleOf(sessionId);
  } catch {
    // A session id the backend refuses was never started there.
    return nothing;
  }
  if (handle === null) return nothing;
  const ref = { sessionId, handle };
  const seen = await backend.observe(ref);
  const found = { handle, presence: seen.presence, containerStartedAt: seen.containerStartedAt };
  if (seen.presence !== 'present') return found;
  if (seen.marker !== null) return { ...found, begun: true };
  try {
    await backend.readOutput(ref);
    return { ...found, begun: true };
  } catch (error) {
    if (isContainerError(error) && error.code === 'not_found') return { ...found, begun: false };
    // Cannot tell whether it began: not evidence either way.
    return { ...found, presence: 'unknown' };
  }
}
