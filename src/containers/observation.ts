/**
 * Turning engine failures into observations. The rule the adopt policy relies
 * on lives here once: only a definite "no such service" is `absent`; any
 * other failure is `unknown`. A ping is an observation of the engine itself.
 */
import type { Observation, PingResult } from './ContainerBackend.js';
import { ContainerError, isContainerError } from './ContainerError.js';

/**
 * @example
 * ```ts
 * toContainerError(new Error('boom'), 'observe rt-s1').code // => 'engine'
 * toContainerError(new ContainerError('timeout', 't'), 'x').code // => 'timeout'
 * ```
 */
export function toContainerError(error: unknown, what: string): ContainerError {
  return isContainerError(error)
    ? error
    : new ContainerError('engine', `${what} failed`, { cause: error });
}

/**
 * @example
 * ```ts
 * unknownOrAbsent(new ContainerError('not_found', 'gone')) // => { presence: 'absent', containerStartedAt: null, marker: null }
 * unknownOrAbsent(new ContainerError('timeout', 'slow')).presence // => 'unknown'
 * unknownOrAbsent(new Error('socket hang up')).presence // => 'unknown'
 * ```
 */
export function unknownOrAbsent(error: unknown): Observation {
  const e = toContainerError(error, 'observe');
  if (e.code === 'not_found') return { presence: 'absent', containerStartedAt: null, marker: null };
  return { presence: 'unknown', containerStartedAt: null, marker: null, error: e };
}

/**
 * Settles a ping probe (already bounded by a deadline) into a `PingResult`,
 * so `ping` never throws: a failed probe is an answer, not an error.
 *
 * @example
 * ```ts
 * await pingResultOf(Promise.resolve('OK')) // => { ok: true }
 * await pingResultOf(Promise.reject(new ContainerError('unavailable', 'ping: engine unavailable'))) // => { ok: false, code: 'unavailable', message: 'ping: engine unavailable' }
 * (await pingResultOf(Promise.reject(new Error('boom')))).code // => 'engine'
 * ```
 */
export async function pingResultOf(probe: Promise<unknown>): Promise<PingResult> {
  try {
    await probe;
    return { ok: true };
  } catch (error) {
    const e = toContainerError(error, 'ping');
    return { ok: false, code: e.code, message: e.message };
  }
}
