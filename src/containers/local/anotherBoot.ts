/**
 * What a node can say of a local run started in another boot: of this
 * machine before a reboot (which ended it), or of another machine, whose
 * processes this one cannot see. A marker is the answer wherever it is
 * read. Otherwise the run is this machine's only when its files are in this
 * node's own directory with this very handle in their record (a data
 * directory is one node's, see src/cli/nodeFile.ts): then it is `absent`.
 * Anything else is `unobservable` (the same path on another machine,
 * another node's directory, a handle written before handles named their
 * directory): no evidence either way, which the recovery policy waits on.
 *
 * Pure.
 */
import type { Observation } from '../ContainerBackend.js';

export interface AnotherBootFacts {
  /** The exit marker's code, if the run's files here have one. */
  exitCode: number | null;
  /** The run's start from its record, if read. */
  startedAt: Date | null;
  /** The files are in this node's own directory, and their record is this handle's. */
  ownRecord: boolean;
}

/**
 * @example
 * ```ts
 * observedFromAnotherBoot({ exitCode: 3, startedAt: null, ownRecord: false }) // => { presence: 'present', containerStartedAt: null, marker: { exitCode: 3 } }
 * observedFromAnotherBoot({ exitCode: null, startedAt: null, ownRecord: true }) // => { presence: 'absent', containerStartedAt: null, marker: null }
 * observedFromAnotherBoot({ exitCode: null, startedAt: null, ownRecord: false }) // => { presence: 'unobservable', containerStartedAt: null, marker: null }
 * ```
 */
export function observedFromAnotherBoot(facts: AnotherBootFacts): Observation {
  if (facts.exitCode !== null) {
    return {
      presence: 'present',
      containerStartedAt: facts.startedAt,
      marker: { exitCode: facts.exitCode },
    };
  }
  return {
    presence: facts.ownRecord ? 'absent' : 'unobservable',
    containerStartedAt: null,
    marker: null,
  };
}
