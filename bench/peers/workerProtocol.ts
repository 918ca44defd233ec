/** Messages between the bench process and a worker child process. */

export type ChildMessage =
  | { type: 'ready'; ids: string[]; node: string; pid: number }
  | { type: 'started'; keys: string[]; at: number[] }
  | { type: 'stopped' };

export type ParentMessage = { type: 'stop' };
