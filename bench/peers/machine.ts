/** What the report says about the machine, so a rerun can be compared. */
import { cpus, totalmem } from 'node:os';
import { serverInfo } from './scratchDb.js';

export interface MachineInfo {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: Record<string, string>;
}

export async function machineInfo(): Promise<MachineInfo> {
  return {
    nproc: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: await serverInfo(),
  };
}
