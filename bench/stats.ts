/** Small statistics helpers shared by the benchmark suites. */
import { mkdirSync, writeFileSync } from 'node:fs';

/** Median of a non-empty list. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile of a non-empty list. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) throw new RangeError('percentile: no values');
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Runs `fn` `runs` times and returns each run's result. */
export async function repeat<T>(runs: number, fn: (i: number) => Promise<T> | T): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn(i));
  return out;
}

/** Writes a result file (JSON and a markdown table) under bench/results/. */
export function writeResults(name: string, data: unknown, markdown: string): void {
  const dir = new URL('./results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  const meta = { node: process.version, date: new Date().toISOString(), cpus: 2 };
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify({ meta, data }, null, 2)}\n`);
  writeFileSync(
    new URL(`${name}.md`, dir),
    `${markdown.trimEnd()}\n\n_${meta.date}, Node ${meta.node}_\n`,
  );
}

/** A bench knob from the environment: a positive integer, or `fallback` when unset. */
export function positiveIntEnv(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new RangeError(`${name} must be a positive integer`);
  return v;
}
