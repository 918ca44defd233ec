import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import * as processTable from '../../../src/containers/local/processTable.js';
import { hostProcessTable, linuxProcessTable } from '../../../src/containers/local/processTable.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/local/processTable.ts', import.meta.url),
  processTable,
);

describe.runIf(process.platform === 'linux')('the Linux process table', () => {
  const table = linuxProcessTable();

  it('names this boot and tells a live process, its start, and no process', () => {
    expect(table.bootToken).toMatch(/^[0-9a-f]{8}$/);
    const me = table.identityOf(process.pid);
    expect(me).toMatchObject({ zombie: false, startToken: expect.stringMatching(/^\d+$/) });
    // btime is whole seconds and ticks are 10 ms: a second or so either side of the truth.
    const startedMs = me!.startedAt!.getTime();
    expect(Math.abs(startedMs - (Date.now() - process.uptime() * 1000))).toBeLessThan(5_000);
    expect(table.identityOf(2 ** 22 + 1)).toBeNull();
  });

  it('gives two processes started at different times different start tokens', async () => {
    const a = spawn('sleep', ['5']);
    await new Promise((r) => setTimeout(r, 50));
    const b = spawn('sleep', ['5']);
    try {
      const ta = table.identityOf(a.pid!)!.startToken;
      const tb = table.identityOf(b.pid!)!.startToken;
      expect(Number(tb)).toBeGreaterThan(Number(ta));
    } finally {
      a.kill('SIGKILL');
      b.kill('SIGKILL');
    }
  });

  it('refuses an OS it cannot track processes on', () => {
    expect(() => hostProcessTable('win32')).toThrow(
      expect.objectContaining({ code: 'unavailable' }),
    );
  });
});
