/**
 * What a backend's test suite hands the contract (`ContractFixture`: the
 * backend, how time passes, which commands exist, how the engine replaces a
 * container) and the small helpers the contract and the project's own
 * backend tests share: fresh namespaces and session ids, and `rejection`.
 * No vitest here: only the suite itself (containerContract.ts) needs it.
 */
import { randomUUID } from 'node:crypto';
import type { ContainerBackend, RunRef } from '../containers/ContainerBackend.js';
import { ContainerError } from '../containers/ContainerError.js';
import { validateNamespace } from '../containers/namespace.js';

export interface ContractFixture {
  backend: ContainerBackend;
  image: string;
  /** A second backend over the same engine: what the application sees after a restart. */
  restarted(): ContainerBackend;
  /** Another backend over the same engine, in `namespace` (the fixture's own is different). */
  inNamespace(namespace: string): ContainerBackend;
  /** A backend whose engine cannot be reached; absent when there is no engine (local). */
  unreachable?(): ContainerBackend;
  /**
   * An image the engine does not have and cannot get, so it refuses a run on
   * it; absent when runs use no image (local).
   */
  unknownImage?: string;
  /** Awaits `p`, driving simulated time if the backend has any. */
  settle<T>(p: Promise<T>): Promise<T>;
  /** Re-checks until `check` returns a value, within `deadlineMs` of the backend's time. */
  eventually<T>(check: () => Promise<T | undefined>, deadlineMs: number): Promise<T>;
  commands: {
    /** Prints `text` then exits with `exitCode`. */
    print(text: string, exitCode: number): string[];
    /** Prints exactly `bytes` bytes. */
    bytes(bytes: number): string[];
    /** Prints `text`, then keeps running for minutes. */
    long(text: string): string[];
  };
  /** Replaces the run's container the way the engine does (kill; Swarm starts another). */
  replaceContainer?(ref: RunRef): Promise<void>;
  /** A newer image to re-pin to, when the backend supports re-pinning. */
  newerImage?: string;
  /** How many times the engine ran the command for the session, when it can tell. */
  execCount?(sessionId: string): number;
}

/**
 * A namespace no other suite or run uses (`t-<tag>-<8 hex>`): suites that
 * share an engine never list, re-pin or sweep each other's runs.
 */
export function testNamespace(tag: string): string {
  return validateNamespace(`t-${tag}-${randomUUID().slice(0, 8)}`);
}

export function newSessionId(tag: string): string {
  return `ct-${tag}-${randomUUID().slice(0, 8)}`;
}

/** A backend broke the contract where `rejection` expected a `ContainerError`. */
export class ContractViolation extends Error {
  override readonly name = 'ContractViolation';
  readonly code = 'CONTRACT_VIOLATION';
}

/** What a call resolved with, short enough for a failure message. */
function shown(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/**
 * The error `p` rejects with, which must be a ContainerError; throws a
 * `ContractViolation` naming what came instead when it resolves or is not.
 */
export async function rejection(p: Promise<unknown>): Promise<ContainerError> {
  let value: unknown;
  try {
    value = await p;
  } catch (error) {
    if (error instanceof ContainerError) return error;
    throw new ContractViolation(`expected a ContainerError, got ${String(error)}`, {
      cause: error,
    });
  }
  throw new ContractViolation(
    `expected a rejection with a ContainerError, but the call resolved with ${shown(value)}`,
  );
}
