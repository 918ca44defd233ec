/**
 * The configuration file is read with a bound: `--config /dev/zero` (or any
 * path that never ends) grew the process to gigabytes with no answer; now it
 * is a one-line config error, exit 2, like any other unreadable file.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fc, test } from '@fast-check/vitest';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ConfigFileTooLargeError,
  MAX_CONFIG_BYTES,
  readConfigText,
} from '../../src/cli/readConfigText.js';
import { cleanEnv } from './cliProcess.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-config-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('readConfigText', () => {
  test.prop([fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 1, max: 64 })])(
    'a file within the bound reads back whole; one byte over is refused',
    (text, slack) => {
      const path = join(dir, 'c.json');
      writeFileSync(path, text);
      const size = Buffer.byteLength(text);
      expect(readConfigText(path, size + slack)).toBe(text);
      expect(readConfigText(path, Math.max(size, 1))).toBe(text);
      if (size > 0) {
        expect(() => readConfigText(path, size - 1)).toThrow(ConfigFileTooLargeError);
      }
    },
  );

  it('a path that never ends is refused at the bound, not read to the end of memory', () => {
    const err = (() => {
      try {
        readConfigText('/dev/zero');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ConfigFileTooLargeError);
    expect(err).toMatchObject({ code: 'CONFIG_TOO_LARGE', maxBytes: MAX_CONFIG_BYTES });
  });

  it('a missing file and a directory throw the file system’s error', () => {
    expect(() => readConfigText(join(dir, 'none.json'))).toThrow(/ENOENT/);
    expect(() => readConfigText(dir)).toThrow(/EISDIR/);
  });
});

it('roundtable status --config /dev/zero: a config error, exit 2, in bounded memory', async () => {
  const main = new URL('../../src/cli/main.ts', import.meta.url).pathname;
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [
        '--import',
        'tsx',
        '--max-old-space-size=256',
        main,
        'status',
        '--config',
        '/dev/zero',
        '--data-dir',
        join(dir, 'data'),
      ],
      { env: cleanEnv(), timeout: 50_000, maxBuffer: 1024 * 1024 },
      (error, _stdout, stderr) =>
        resolve({ code: error === null ? 0 : (error.code as number | null), stderr }),
    );
  });
  expect(stderr).toContain('--config: /dev/zero cannot be read: more than 1048576 bytes');
  expect(code).toBe(2);
}, 60_000);
