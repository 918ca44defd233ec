import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliError } from '../../src/cli/exitCodes.js';
import { claimNodeFile, NODE_FILE, processAlive, readLiveNode } from '../../src/cli/nodeFile.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-node-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The id of a process that has ended. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  const pid = Number(child.stdout);
  expect(processAlive(pid)).toBe(false);
  return pid;
}

const write = (pid: number, url: string | null = 'http://127.0.0.1:1') =>
  writeFileSync(
    join(dir, NODE_FILE),
    JSON.stringify({ pid, url, startedAt: new Date(0).toISOString(), engine: 'pglite' }),
  );

describe('claimNodeFile', () => {
  it('claims a free directory, records the URL, and removes the file on release', () => {
    const claim = claimNodeFile(dir, 'pglite');
    claim.setUrl('http://127.0.0.1:4100');
    const info = JSON.parse(readFileSync(join(dir, NODE_FILE), 'utf8'));
    expect(info).toMatchObject({
      pid: process.pid,
      url: 'http://127.0.0.1:4100',
      engine: 'pglite',
    });
    claim.release();
    claim.release();
    expect(existsSync(join(dir, NODE_FILE))).toBe(false);
  });

  it('refuses a directory a live process holds, naming it (exit code 4)', () => {
    write(process.ppid);
    let error: unknown;
    try {
      claimNodeFile(dir, 'pglite');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).code).toBe('CLI_IN_USE');
    expect((error as CliError).exitCode).toBe(4);
    expect((error as CliError).message).toContain(String(process.ppid));
  });

  it('takes over a file left by a process that died', () => {
    write(deadPid());
    const claim = claimNodeFile(dir, 'pglite');
    expect(JSON.parse(readFileSync(join(dir, NODE_FILE), 'utf8')).pid).toBe(process.pid);
    claim.release();
  });

  it('takes over a file naming its own pid, left by an earlier process with that pid (pid 1 in a container, after a SIGKILL)', () => {
    write(process.pid);
    const claim = claimNodeFile(dir, 'pglite');
    expect(JSON.parse(readFileSync(join(dir, NODE_FILE), 'utf8')).pid).toBe(process.pid);
    // Held by this process now: a second claim here is refused all the same.
    expect(() => claimNodeFile(dir, 'pglite')).toThrow(
      expect.objectContaining({ code: 'CLI_IN_USE', exitCode: 4 }),
    );
    claim.release();
    expect(existsSync(join(dir, NODE_FILE))).toBe(false);
  });

  it('a data directory that cannot be made is a configuration error (exit 2), not a stack trace', () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    for (const [target, reason] of [
      [file, 'EEXIST'],
      [join(file, 'sub'), 'ENOTDIR'],
    ] as const) {
      let error: unknown;
      try {
        claimNodeFile(target, 'pglite');
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(CliError);
      expect(error).toMatchObject({ code: 'CLI_CONFIG', exitCode: 2 });
      expect((error as Error).message).toContain(
        `--data-dir ${target}: cannot create it (${reason}`,
      );
    }
  });

  it('a data directory it may not write is a configuration error (exit 2), not "in use" (4)', () => {
    // Root writes through a mode of 0500 (CI runs as root): sysfs refuses even root.
    const asRoot = process.getuid?.() === 0;
    const target = asRoot ? '/sys/kernel' : dir;
    if (!asRoot) chmodSync(dir, 0o500);
    try {
      expect(() => claimNodeFile(target, 'pglite')).toThrow(
        expect.objectContaining({ code: 'CLI_CONFIG', exitCode: 2 }),
      );
    } finally {
      if (!asRoot) chmodSync(dir, 0o700);
    }
  });

  it('release leaves a file someone else wrote since', () => {
    const claim = claimNodeFile(dir, 'pglite');
    write(process.ppid);
    claim.release();
    expect(existsSync(join(dir, NODE_FILE))).toBe(true);
  });
});

describe('readLiveNode', () => {
  it('sees a live node, and not a dead one, a damaged file or none', () => {
    expect(readLiveNode(dir)).toBeNull();
    write(process.ppid);
    expect(readLiveNode(dir)?.pid).toBe(process.ppid);
    write(deadPid());
    expect(readLiveNode(dir)).toBeNull();
    writeFileSync(join(dir, NODE_FILE), 'not json');
    expect(readLiveNode(dir)).toBeNull();
  });
});
