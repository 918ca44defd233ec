/**
 * The real process under `--log-format json`: a bad flag and a bad config
 * file (exit 2) print one JSON record, never a line of text, so a log
 * shipper parses every line the process writes.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { cleanEnv } from './cliProcess.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-json-failures-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Runs the CLI from source; its exit code and every line it wrote, parsed (a line of text throws). */
function cli(args: readonly string[]) {
  const main = new URL('../../src/cli/main.ts', import.meta.url).pathname;
  return new Promise<{ code: number | null; records: Record<string, unknown>[] }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', main, ...args, '--data-dir', join(dir, 'data')],
      { env: cleanEnv(), timeout: 50_000 },
      (error, stdout, stderr) => {
        const lines = `${stdout}${stderr}`.split('\n').filter((l) => l !== '');
        const records = lines.map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            throw new Error(`a line of text under JSON logs: ${l}`);
          }
        });
        resolve({ code: error === null ? 0 : (error.code as number | null), records });
      },
    );
  });
}

it('roundtable start --log-format json --bogus, and with a bad config file: one record each, exit 2', async () => {
  const bogus = await cli(['start', '--log-format', 'json', '--bogus']);
  expect(bogus.code).toBe(2);
  expect(bogus.records).toEqual([
    expect.objectContaining({ level: 50, command: 'start', code: 'CLI_USAGE', exitCode: 2 }),
  ]);
  const path = join(dir, 'rt.json');
  writeFileSync(path, '{"caps":{"maxRuning":3}}');
  const file = await cli(['start', '--log-format', 'json', '--config', path]);
  expect(file.code).toBe(2);
  expect(file.records).toEqual([
    expect.objectContaining({ command: 'start', code: 'CLI_CONFIG', exitCode: 2 }),
  ]);
  expect(String(file.records[0]?.msg)).toContain('did you mean "maxRunning"?');
}, 60_000);
