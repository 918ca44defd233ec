/**
 * Maps what dockerode throws onto `ContainerError` codes, keeping the
 * original as `cause`. Connection failures are `unavailable`, so observe can
 * report `unknown` rather than mistaking an outage for a missing service.
 */
import { ContainerError, cutReason, isContainerError } from '../ContainerError.js';

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

/**
 * The engine's own words: the API's JSON `message` when it sent one, else the
 * error's message.
 *
 * @example
 * ```ts
 * engineMessage({ statusCode: 404, json: { message: 'No such image: r:9' }, message: '(HTTP code 404) no such container - No such image: r:9 ' }) // => 'No such image: r:9'
 * engineMessage(new Error('socket hang up')) // => 'socket hang up'
 * engineMessage(undefined) // => ''
 * ```
 */
export function engineMessage(error: unknown): string {
  const e = (error ?? {}) as { json?: unknown; message?: unknown };
  const json = e.json as { message?: unknown } | null | undefined;
  if (typeof json?.message === 'string' && json.message !== '') return json.message;
  return typeof e.message === 'string' ? e.message : '';
}

/**
 * What a failed create means for a start: the engine answered 400 (bad
 * parameter) or 404 (no such image or network) about a spec we built from the
 * task's, so this spec is refused and retrying it cannot help: `rejected`,
 * with the engine's reason. Anything else keeps its code (an outage stays
 * `unavailable`, a 500 stays `engine`).
 *
 * @example
 * ```ts
 * const missing = { statusCode: 404, json: { message: 'No such image: r:9' } }
 * asStartRefusal(classifyDockerError(missing, 'create container rt-s1')).code // => 'rejected'
 * asStartRefusal(classifyDockerError(missing, 'create container rt-s1')).message // => 'No such image: r:9'
 * asStartRefusal(classifyDockerError({ statusCode: 400, json: { message: 'invalid mount' } }, 'create')).code // => 'rejected'
 * asStartRefusal(classifyDockerError({ code: 'ECONNREFUSED' }, 'create')).code // => 'unavailable'
 * asStartRefusal(classifyDockerError({ statusCode: 500 }, 'create')).code // => 'engine'
 * ```
 */
export function asStartRefusal<E>(error: E): E | ContainerError {
  if (!isContainerError(error)) return error;
  const status = (error.cause as { statusCode?: unknown } | undefined)?.statusCode;
  if (status !== 400 && status !== 404) return error;
  return new ContainerError('rejected', cutReason(engineMessage(error.cause)), {
    cause: error.cause,
  });
}
