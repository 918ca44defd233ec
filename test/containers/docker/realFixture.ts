/** Fixture pieces shared by the Swarm and plain Docker suites (real engine, real time). */
import type { ContractFixture } from '../contract.js';

export const busyboxCommands: ContractFixture['commands'] = {
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
};

/** Polls a real engine; the deadline bounds it. */
export async function eventuallyReal<T>(
  check: () => Promise<T | undefined>,
  deadlineMs: number,
): Promise<T> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() >= until) throw new Error(`not within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
