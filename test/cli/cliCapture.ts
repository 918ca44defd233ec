/**
 * The CLI's I/O captured in memory, for running `runCli` in-process: what it
 * wrote to stdout and stderr, the exits it asked for, and a way to send it
 * a signal. Files are read from `files` only.
 */
import type { CliIo } from '../../src/cli/commandContext.js';

export interface Captured {
  io: CliIo;
  out: () => string;
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
  const handlers = new Set<(s: 'SIGINT' | 'SIGTERM') => void>();
  const exits: number[] = [];
  return {
    io: {
      env: { ROUNDTABLE_LOG_FORMAT: 'json', ...env },
      stdout: {
        write: (t) => {
          out += t;
        },
        isTTY: false,
      },
      stderr: {
        write: (t) => {
          err += t;
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
    err: () => err,
    signal: (s) => {
      for (const h of handlers) h(s);
    },
    exits,
  };
}
