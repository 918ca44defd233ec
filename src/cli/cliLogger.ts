/**
 * Structured logs: JSON lines when stdout is not a terminal (for a log
 * shipper), one readable line per record when it is. pino-pretty is not a
 * dependency, so the readable form is the small formatter below.
 */
import { type Logger, pino } from 'pino';

export type LogFormat = 'auto' | 'json' | 'pretty';

export interface CliLoggerOptions {
  level: string;
  format: LogFormat;
  /** Whether the output is a terminal (decides `auto`). */
  isTTY: boolean;
  /** Where finished lines go (stdout in the CLI, an array in tests). */
  write: (line: string) => void;
  /** Colours in the readable form; default: when `isTTY`. */
  color?: boolean;
}

/** pino's numeric levels, as the readable form names them. */
const LEVELS: Record<number, { label: string; color: string }> = {
  10: { label: 'TRACE', color: '90' },
  20: { label: 'DEBUG', color: '90' },
  30: { label: 'INFO ', color: '32' },
  40: { label: 'WARN ', color: '33' },
  50: { label: 'ERROR', color: '31' },
  60: { label: 'FATAL', color: '35' },
};

/** Fields every record carries that the readable form shows in its own place, or not at all. */
const OWN = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'name', 'component']);
const MAX_VALUE = 300;

export interface FormatOptions {
  color: boolean;
  /** Renders the record's time; default: local `HH:MM:SS`. */
  time?: (ms: number) => string;
}

/**
 * One pino record as one readable line (plus an indented stack for errors).
 *
 * @example
 * ```ts
 * const time = () => '12:00:00'
 * formatLogLine({ level: 30, time: 0, msg: 'listening', url: 'http://x' }, { color: false, time }) // => '12:00:00 INFO  listening url=http://x'
 * formatLogLine({ level: 40, time: 0, component: 'db', msg: 'slow', ms: 12, q: 'a b' }, { color: false, time }) // => '12:00:00 WARN  [db] slow ms=12 q="a b"'
 * formatLogLine({ level: 30, time: 0, msg: 'x', o: { a: 1 } }, { color: false, time }) // => '12:00:00 INFO  x o={"a":1}'
 * formatLogLine({ level: 30, time: 0, msg: 'x', s: 'y'.repeat(400) }, { color: false, time }).endsWith('y…') // => true
 * ```
 */
export function formatLogLine(record: Record<string, unknown>, options: FormatOptions): string {
  const level = LEVELS[Number(record.level)] ?? { label: String(record.level), color: '0' };
  const paint = (code: string, text: string) =>
    options.color ? `\x1b[${code}m${text}\x1b[0m` : text;
  const time = (options.time ?? localTime)(Number(record.time));
  const component = typeof record.component === 'string' ? `[${record.component}] ` : '';
  let line = `${paint('90', time)} ${paint(level.color, level.label)} ${component}${String(record.msg ?? '')}`;
  let stack = '';
  for (const [key, value] of Object.entries(record)) {
    if (OWN.has(key) || value === undefined) continue;
    if (key === 'err' && typeof value === 'object' && value !== null) {
      const e = value as { type?: string; message?: string; stack?: string };
      line += ` ${paint('90', 'err=')}${JSON.stringify(`${e.type ?? 'Error'}: ${e.message ?? ''}`)}`;
      if (Number(record.level) >= 50 && typeof e.stack === 'string') {
        stack = `\n${e.stack
          .split('\n')
          .slice(1)
          .map((l) => `    ${l.trim()}`)
          .join('\n')}`;
      }
      continue;
    }
    line += ` ${paint('90', `${key}=`)}${renderValue(value)}`;
  }
  return line + stack;
}

function renderValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string')
    text = /^[^\s"=]*$/.test(value) && value !== '' ? value : JSON.stringify(value);
  else text = JSON.stringify(value) ?? String(value);
  // A cut is marked, never silent.
  return text.length > MAX_VALUE ? `${text.slice(0, MAX_VALUE - 1)}…` : text;
}

function localTime(ms: number): string {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** Whether records come out readable (`pretty`) or as JSON lines. */
export function prettyLogs(format: LogFormat, isTTY: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && isTTY);
}

/** The CLI's logger. Lines are written synchronously, so nothing is lost when the process ends. */
export function createCliLogger(options: CliLoggerOptions): Logger {
  const pretty = prettyLogs(options.format, options.isTTY);
  const color = options.color ?? options.isTTY;
  const stream = {
    write(chunk: string) {
      if (!pretty) return options.write(chunk);
      for (const text of chunk.split('\n')) {
        if (text === '') continue;
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(text) as Record<string, unknown>;
        } catch {
          options.write(`${text}\n`);
          continue;
        }
        options.write(`${formatLogLine(record, { color })}\n`);
      }
    },
  };
  return pino(
    {
      name: 'roundtable',
      level: options.level,
      ...(pretty ? { base: undefined } : {}),
    },
    stream,
  );
}
