/**
 * What `observe` says of a local run, from its handle (pid, kernel start
 * time, boot, run directory) and its files: present (the same process, or
 * its marker), replaced (the pid is another process's now: a later
 * `containerStartedAt`, which the adopt policy reads as
 * `container_replaced`), absent (no process, no marker), and for a run of
 * another boot whatever `anotherBoot.ts` can tell.
 */
import { readFileSync } from 'node:fs';
import type { Observation, RunRef } from '../ContainerBackend.js';
import { markerPath, parseMarker } from '../wrapper.js';
import { observedFromAnotherBoot } from './anotherBoot.js';
import type { LocalHandle } from './localHandle.js';
import type { ProcessTable } from './processTable.js';
import type { RunDirectory } from './runDirectory.js';

export interface LocalObserver {
  /** Where the handle says the run's files are. */
  files: RunDirectory;
  /** Whether `files` is this node's own run directory. */
  own: boolean;
  processes: ProcessTable;
}

/** The run's exit code from its marker; null while (or if) there is none. */
export function readLocalMarker(files: RunDirectory, sessionId: string): number | null {
  try {
    return parseMarker(readFileSync(markerPath(sessionId, files.dirOf(sessionId)), 'utf8'));
  } catch {
    return null;
  }
}

/** The handle's process is alive and the same one: same start time, same boot, not a zombie. */
export function sameProcess(h: LocalHandle, processes: ProcessTable): boolean {
  const now = processes.identityOf(h.pid);
  return (
    now !== null &&
    !now.zombie &&
    now.startToken === h.startToken &&
    h.bootToken === processes.bootToken
  );
}

export function observeLocalRun(ref: RunRef, h: LocalHandle, o: LocalObserver): Observation {
  const absent: Observation = { presence: 'absent', containerStartedAt: null, marker: null };
  const { files, processes } = o;
  const record = files.readRecord(ref.sessionId);
  if (h.bootToken !== processes.bootToken) {
    return observedFromAnotherBoot({
      exitCode: record === null ? null : readLocalMarker(files, ref.sessionId),
      startedAt: record?.startedAt ?? null,
      ownRecord: o.own && record?.handle === ref.handle,
    });
  }
  if (!files.exists(ref.sessionId)) return absent;
  const startedAt = record?.startedAt ?? null;
  // The process first, then the marker: the wrapper writes the marker before
  // it exits, so a process seen gone and then no marker means none will come.
  const now = processes.identityOf(h.pid);
  const exitCode = readLocalMarker(files, ref.sessionId);
  if (exitCode !== null) {
    return { presence: 'present', containerStartedAt: startedAt, marker: { exitCode } };
  }
  if (now === null || now.zombie) return absent;
  if (sameProcess(h, processes))
    return { presence: 'present', containerStartedAt: startedAt, marker: null };
  // The pid is someone else's now. It started after our run (the kernel does
  // not hand out a pid in use); the second-grained boot time may say otherwise.
  const later = Math.max(now.startedAt?.getTime() ?? 0, (startedAt?.getTime() ?? 0) + 1);
  return { presence: 'present', containerStartedAt: new Date(later), marker: null };
}
