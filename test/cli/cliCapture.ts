/**
 * The CLI's I/O captured in memory, for running `runCli` in-process: what it
 * wrote to stdout and stderr, the exits it asked for, and a way to send it
 * a signal. Files are read from `files` only.
 */
import type { CliIo } from '../../src/cli/commandContext.js';

export interface Captured {
  io: CliIo;
  out: () => string;
  /** Every byte written to stdout, text and bytes alike, in order. */
  outBytes: () => Buffer;
  err: () => string;
  signal: (s: 'SIGINT' | 'SIGTERM') => void;
  exits: number[];
}

export function capture(
  env: Record<string, string> = {},
  files: Record<string, string> = {},
): Captured {
  let out = '';
  let err = '';
  const outParts: Buffer[] = [];
  // Bytes may end inside a character; the next part finishes it.
  const decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  const handlers = new Set<(s: 'SIGINT' | 'SIGTERM') => void>();
  const exits: number[] = [];
  return {
    io: {
      env: { ROUNDTABLE_LOG_FORMAT: 'json', ...env },
      stdout: {
        write: (t) => {
          outParts.push(Buffer.from(t));
          out += typeof t === 'string' ? t : decoder.decode(t, { stream: true });
        },
        isTTY: false,
      },
      stderr: {
        write: (t) => {
          err += typeof t === 'string' ? t : Buffer.from(t).toString('utf8');
        },
        isTTY: false,
      },
      readFile: (path) => {
        const text = files[path];
        if (text === undefined)
          throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
        return text;
      },
      onSignal: (h) => {
        handlers.add(h);
        return () => handlers.delete(h);
      },
      exit: (code) => void exits.push(code),
    },
    out: () => out,
    outBytes: () => Buffer.concat(outParts),
    err: () => err,
    signal: (s) => {
      for (const h of handlers) h(s);
    },
    exits,
  };
}
