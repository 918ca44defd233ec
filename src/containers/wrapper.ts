/**
 * The run wrapper shared by every real backend: a fixed POSIX `sh` script
 * that runs the command (passed as argv, never spliced into the script), tees
 * its output to a per-session file, and renames the exit code into the marker
 * last, so the marker's presence proves the output file is complete.
 *
 * Names and paths derive from the session id alone, and only after
 * `validateSessionId` accepted it.
 */
import type { RunOutput } from './ContainerBackend.js';
import { ContainerError } from './ContainerError.js';

/** Ids become service names and file names: keep them boring. */
// Names are `rt-<sessionId>`, and Docker caps service names at 63 characters.
const SESSION_ID = /^[A-Za-z0-9_-]{1,60}$/;

/** Label every roundtable service and container carries, valued with the session id. */
export const SESSION_LABEL = 'roundtable.session';

/** Largest output `readOutput` returns whole; beyond it the head is dropped and the cut marked. */
export const OUTPUT_LIMIT_BYTES = 16 * 1024 * 1024;

/** Where the wrapper writes inside a container. */
export const CONTAINER_RUN_DIR = '/tmp';

/**
 * The wrapper. `$@` is the command; the session id and directory come from
 * the environment. POSIX sh has no PIPESTATUS, so the command's own status is
 * written from inside the piped group to a temp file, which is renamed onto
 * the marker only after `tee` has drained the pipe.
 */
export const WRAPPER_SCRIPT = [
  'set -u',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  'dir="${ROUNDTABLE_RUN_DIR:-/tmp}"',
  'id="$ROUNDTABLE_SESSION_ID"',
  'out="$dir/roundtable-output-$id.log"',
  'marker="$dir/roundtable-exit-$id"',
  'pending="$dir/.roundtable-exit-$id.$$"',
  'rm -f "$marker"',
  '{ "$@" </dev/null; echo "$?" >"$pending"; } 2>&1 | tee "$out"',
  'code=$(cat "$pending" 2>/dev/null) || code=255',
  'mv -f "$pending" "$marker"',
  'exit "$code"',
].join('\n');

/** Prints the output file's size on the first line, then its last `$2` bytes. */
export const READ_OUTPUT_SCRIPT = 'wc -c <"$1" && tail -c "$2" "$1"';

/**
 * Throws `invalid_argument` unless the id is 1-60 letters, digits, `_` or `-`.
 *
 * @example
 * ```ts
 * validateSessionId('s-42_a') // => 's-42_a'
 * validateSessionId('a;rm -rf /') // throws invalid_argument
 * validateSessionId('') // throws invalid_argument
 * validateSessionId('x'.repeat(60)) // => 'x'.repeat(60)
 * validateSessionId('x'.repeat(61)) // throws invalid_argument
 * ```
 */
export function validateSessionId(sessionId: string): string {
  if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) {
    throw new ContainerError(
      'invalid_argument',
      `session id must match ${SESSION_ID.source}, got ${JSON.stringify(sessionId)}`,
    );
  }
  return sessionId;
}

/**
 * The service or container name of a session.
 *
 * @example
 * ```ts
 * handleFor('s1') // => 'rt-s1'
 * handleFor('../etc') // throws invalid_argument
 * ```
 */
export function handleFor(sessionId: string): string {
  return `rt-${validateSessionId(sessionId)}`;
}

/**
 * @example
 * ```ts
 * outputPath('s1') // => '/tmp/roundtable-output-s1.log'
 * outputPath('s1', '/var/run/x') // => '/var/run/x/roundtable-output-s1.log'
 * ```
 */
export function outputPath(sessionId: string, dir: string = CONTAINER_RUN_DIR): string {
  return `${dir}/roundtable-output-${validateSessionId(sessionId)}.log`;
}

/**
 * @example
 * ```ts
 * markerPath('s1') // => '/tmp/roundtable-exit-s1'
 * ```
 */
export function markerPath(sessionId: string, dir: string = CONTAINER_RUN_DIR): string {
  return `${dir}/roundtable-exit-${validateSessionId(sessionId)}`;
}

/**
 * The argv that runs `command` under the wrapper; the command rides along as
 * positional parameters, so no quoting can break out of it.
 *
 * @example
 * ```ts
 * wrapperArgv(['echo', '$(reboot)']).slice(4) // => ['echo', '$(reboot)']
 * wrapperArgv(['echo'])[0] // => 'sh'
 * wrapperArgv([]) // throws invalid_argument
 * ```
 */
export function wrapperArgv(command: readonly string[]): string[] {
  if (command.length === 0 || command[0] === '') {
    throw new ContainerError('invalid_argument', 'command must be a non-empty argv array');
  }
  return ['sh', '-c', WRAPPER_SCRIPT, 'roundtable-run', ...command];
}

/**
 * Environment the wrapper reads, merged over the run's own env.
 *
 * @example
 * ```ts
 * wrapperEnv('s1', { A: '1' }) // => { A: '1', ROUNDTABLE_SESSION_ID: 's1', ROUNDTABLE_RUN_DIR: '/tmp' }
 * ```
 */
export function wrapperEnv(
  sessionId: string,
  env: Readonly<Record<string, string>> = {},
  dir: string = CONTAINER_RUN_DIR,
): Record<string, string> {
  return { ...env, ROUNDTABLE_SESSION_ID: validateSessionId(sessionId), ROUNDTABLE_RUN_DIR: dir };
}

/**
 * Reads a marker file's text; anything but a whole number is no marker.
 *
 * @example
 * ```ts
 * parseMarker('0\n') // => 0
 * parseMarker('137') // => 137
 * parseMarker('') // => null
 * parseMarker('oops') // => null
 * ```
 */
export function parseMarker(text: string): number | null {
  const trimmed = text.trim();
  if (!/^\d{1,3}$/.test(trimmed)) return null;
  return Number(trimmed);
}

/**
 * Builds a `RunOutput` from the kept tail of a file of `totalBytes`, marking a
 * cut in the text itself so that nobody reading it can miss it.
 *
 * @example
 * ```ts
 * runOutputFrom(Buffer.from('abc'), 3) // => { text: 'abc', totalBytes: 3, truncated: false }
 * runOutputFrom(Buffer.from('bc'), 3).text // => '[roundtable: output cut, first 1 of 3 bytes dropped]\nbc'
 * ```
 */
export function runOutputFrom(tail: Uint8Array, totalBytes: number): RunOutput {
  const text = new TextDecoder().decode(tail);
  if (tail.byteLength >= totalBytes) return { text, totalBytes, truncated: false };
  const dropped = totalBytes - tail.byteLength;
  return {
    text: `[roundtable: output cut, first ${dropped} of ${totalBytes} bytes dropped]\n${text}`,
    totalBytes,
    truncated: true,
  };
}
