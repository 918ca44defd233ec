/**
 * Reads the configuration file (`--config`, `ROUNDTABLE_CONFIG`) with a
 * bound: a configuration is a few kilobytes, and `readFileSync` reads a
 * path such as `/dev/zero` or `/dev/urandom` until the process runs out of
 * memory (measured: 2.2 GB resident after 40 s, no answer). A pipe
 * (`--config <(jq ... base.json)`) is still read to its end, like a file.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** The largest configuration file read: 1 MiB. */
export const MAX_CONFIG_BYTES = 1024 * 1024;

/** The file is longer than `MAX_CONFIG_BYTES` (or never ends). */
export class ConfigFileTooLargeError extends Error {
  override readonly name = 'ConfigFileTooLargeError';
  readonly code = 'CONFIG_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(`more than ${maxBytes} bytes: not a configuration file`);
  }
}

/**
 * The UTF-8 text of `path`, at most `maxBytes` of it. Throws
 * `ConfigFileTooLargeError` past that, and the file system's error (ENOENT,
 * EISDIR, ...) when it cannot be read.
 */
export function readConfigText(path: string, maxBytes: number = MAX_CONFIG_BYTES): string {
  const fd = openSync(path, 'r');
  try {
    // One byte more than allowed tells a file of exactly maxBytes from a longer one.
    const buf = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new ConfigFileTooLargeError(maxBytes);
    }
    return buf.toString('utf8', 0, length);
  } finally {
    closeSync(fd);
  }
}
