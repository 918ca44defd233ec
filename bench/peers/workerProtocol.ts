/** Messages between the bench process and a worker child process. */
import type { QueryProfile } from './queryProfile.js';

export type ChildMessage =
  | { type: 'ready'; ids: string[]; node: string; pid: number }
  | { type: 'started'; keys: string[]; at: number[] }
  | { type: 'enqueued'; id: number; error?: string }
  | { type: 'cpu'; id: number; usage: NodeJS.CpuUsage }
  | { type: 'stopped'; profile: QueryProfile };

export type ParentMessage =
  | { type: 'stop' }
  | { type: 'enqueue'; id: number; keys: string[] }
  | { type: 'cpu'; id: number };
