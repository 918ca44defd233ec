/**
 * The log format a command line asks for, read before the command line is
 * parsed or the configuration resolved: a failure found there (a bad flag,
 * a bad config file: exit 2) is reported in the format the logs would have
 * had, so under JSON logs it is one record a log shipper can read, not a
 * line of text. Pure.
 */
import type { LogFormat } from './cliLogger.js';

const FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

/**
 * `--log-format` (the last one before `--`), else `ROUNDTABLE_LOG_FORMAT`,
 * else the default `auto`; the configuration file is not read yet. Null
 * when the value given is not a format: then the format itself is what is
 * wrong, and the failure is said in text.
 *
 * @example
 * ```ts
 * earlyLogFormat(['--bogus', '--log-format', 'json'], {}) // => 'json'
 * earlyLogFormat(['--log-format=pretty'], { ROUNDTABLE_LOG_FORMAT: 'json' }) // => 'pretty'
 * earlyLogFormat(['--port', '1'], { ROUNDTABLE_LOG_FORMAT: 'json' }) // => 'json'
 * earlyLogFormat(['--', 'sh', '--log-format', 'json'], {}) // => 'auto'
 * earlyLogFormat(['--log-format', 'xml'], {}) // => null
 * ```
 */
export function earlyLogFormat(
  words: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): LogFormat | null {
  let given: string | undefined;
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    if (word === '--') break;
    if (word === '--log-format') given = words[++i];
    else if (word?.startsWith('--log-format=')) given = word.slice('--log-format='.length);
  }
  given ??= env.ROUNDTABLE_LOG_FORMAT ?? 'auto';
  return FORMATS.find((f) => f === given) ?? null;
}
