/**
 * The application's check of its own backend: the project's contract suite
 * (`roundtable/testing/contract`), the same one every built-in backend
 * passes, run with vitest against `AuditedBackend`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ContractFixture,
  containerContract,
  testNamespace,
} from 'roundtable/testing/contract';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditedBackend } from './auditedBackend.js';

const baseDir = mkdtempSync(join(tmpdir(), 'audited-'));
const namespace = testNamespace('audited');
const backends: AuditedBackend[] = [];
function make(ns = namespace): AuditedBackend {
  const b = new AuditedBackend({ baseDir, namespace: ns, stopGraceMs: 2_000 });
  backends.push(b);
  return b;
}
afterAll(() => {
  for (const b of backends) b.close();
  rmSync(baseDir, { recursive: true, force: true });
});

async function until<T>(check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const backend = make();
containerContract(
  'audited local backend',
  (): ContractFixture => ({
    backend,
    image: 'host',
    restarted: () => make(),
    inNamespace: (ns) => make(ns),
    settle: (p) => p,
    eventually: until,
    commands: {
      print: (text, code) => [
        'sh',
        '-c',
        'printf "%s\\n" "$1"; exit "$2"',
        'print',
        text,
        String(code),
      ],
      bytes: (n) => ['head', '-c', String(n), '/dev/zero'],
      long: (text) => ['sh', '-c', 'echo "$1"; sleep 600', 'long', text],
    },
  }),
);

describe('the audit log', () => {
  it('has every start and removal the contract made', () => {
    const starts = backend.log.filter((e) => e.action === 'start');
    expect(starts.length).toBeGreaterThan(0);
    expect(backend.log.filter((e) => e.action === 'remove').length).toBeGreaterThan(0);
  });
});
