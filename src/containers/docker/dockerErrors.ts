/**
 * Maps what dockerode throws onto `ContainerError` codes, keeping the
 * original as `cause`. Connection failures are `unavailable`, so observe can
 * report `unknown` rather than mistaking an outage for a missing service.
 */
import { ContainerError, isContainerError } from '../ContainerError.js';

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOENT',
  'ECONNRESET',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'EACCES',
]);

/**
 * @example
 * ```ts
 * classifyDockerError({ statusCode: 404, message: 'no such service' }, 'inspect rt-s1').code // => 'not_found'
 * classifyDockerError({ statusCode: 409 }, 'create rt-s1').code // => 'conflict'
 * classifyDockerError({ statusCode: 503 }, 'list').code // => 'unavailable'
 * classifyDockerError({ code: 'ECONNREFUSED' }, 'list').code // => 'unavailable'
 * classifyDockerError(new Error('weird'), 'list').code // => 'engine'
 * ```
 */
export function classifyDockerError(error: unknown, what: string): ContainerError {
  if (isContainerError(error)) return error;
  const e = (error ?? {}) as { statusCode?: unknown; code?: unknown };
  const status = typeof e.statusCode === 'number' ? e.statusCode : undefined;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (status === 404)
    return new ContainerError('not_found', `${what}: not found`, { cause: error });
  if (status === 409) return new ContainerError('conflict', `${what}: conflict`, { cause: error });
  if (status === 503 || (code !== undefined && UNREACHABLE.has(code))) {
    return new ContainerError('unavailable', `${what}: engine unavailable`, { cause: error });
  }
  return new ContainerError('engine', `${what} failed`, { cause: error });
}
