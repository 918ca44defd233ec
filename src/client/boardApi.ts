/**
 * Typed calls to the board's HTTP API, over `fetch` (Node 20 and browsers).
 * Failures reject with {@link BoardApiError} carrying the server's code.
 */
import type {
  ActivitySeries,
  ClusterNodeView,
  CreateTaskInput,
  OutputPage,
  PoolSnapshot,
  TaskDetail,
} from '../board/boardPort.js';
import type { BoardStatsSnapshot } from '../board/boardStats.js';

/** An API call the server answered with an error, or that never got an answer. */
export class BoardApiError extends Error {
  override readonly name = 'BoardApiError';
  constructor(
    /** HTTP status; 0 when the request itself failed. */
    readonly status: number,
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The board API for one token. */
export interface BoardApi {
  /**
   * `POST /api/tasks`; `input.key` goes as the `Idempotency-Key` header, so
   * the same call made again after a lost answer gets the same task back
   * (`replayed`) instead of a second run.
   */
  createTask(
    input: CreateTaskInput,
  ): Promise<{ taskId: string; sessionId: string; position: number; replayed?: boolean }>;
  cancel(taskId: string): Promise<void>;
  retry(taskId: string): Promise<{ sessionId: string; position: number }>;
  setUserCap(userId: string, maxRunning: number | null): Promise<void>;
  pool(): Promise<PoolSnapshot>;
  /** Recent run durations, and for the admin the last hour's points (`GET /api/stats`). */
  stats(): Promise<BoardStatsSnapshot>;
  /** A task with every attempt (`GET /api/tasks/:id`). */
  task(taskId: string): Promise<TaskDetail>;
  /** Lines `from`.. of an attempt's stored output; without `from`, its last `count` lines. */
  outputPage(taskId: string, sessionId: string, from?: number, count?: number): Promise<OutputPage>;
  /** An attempt's whole stored output as a file. */
  outputFile(taskId: string, sessionId: string): Promise<Blob>;
  /** Admin: the dashboard's per-minute series (`GET /api/admin/activity`); `at` is ISO-8601. */
  activity(query?: { minutes?: number; at?: string }): Promise<ActivitySeries>;
  /** Admin: every boot of the cluster (`GET /api/admin/nodes`). */
  clusterNodes(): Promise<ClusterNodeView[]>;
}

/** `baseUrl` is `http://host:port` ('' in the page: same origin). */
export function createBoardApi(options: {
  baseUrl: string;
  token: string;
  fetch?: typeof globalThis.fetch;
}): BoardApi {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  async function request(
    method: string,
    path: string,
    body?: unknown,
    extra: Record<string, string> = {},
  ): Promise<Response> {
    let res: Response;
    try {
      res = await doFetch(`${options.baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...extra,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      throw new BoardApiError(0, 'network', `${method} ${path} failed`, { cause: err });
    }
    return res;
  }
  function refusal(res: Response, json: unknown): BoardApiError {
    const e = (json as { error?: { code?: string; message?: string } } | undefined)?.error;
    return new BoardApiError(res.status, e?.code ?? 'http', e?.message ?? res.statusText);
  }
  async function call<T>(
    method: string,
    path: string,
    body?: unknown,
    extra?: Record<string, string>,
  ): Promise<T> {
    const res = await request(method, path, body, extra);
    const text = await res.text();
    const json: unknown = text === '' ? undefined : JSON.parse(text);
    if (!res.ok) throw refusal(res, json);
    return json as T;
  }
  const id = encodeURIComponent;
  return {
    createTask: ({ key, ...input }) =>
      call('POST', '/api/tasks', input, key === undefined ? {} : { 'idempotency-key': key }),
    cancel: (taskId) => call('POST', `/api/tasks/${id(taskId)}/cancel`),
    retry: (taskId) => call('POST', `/api/tasks/${id(taskId)}/retry`),
    setUserCap: (userId, maxRunning) => call('PUT', `/api/users/${id(userId)}/cap`, { maxRunning }),
    pool: () => call('GET', '/api/pool'),
    stats: () => call('GET', '/api/stats'),
    task: (taskId) => call('GET', `/api/tasks/${id(taskId)}`),
    outputPage(taskId, sessionId, from, count) {
      const q = new URLSearchParams();
      if (from !== undefined) q.set('from', String(from));
      if (count !== undefined) q.set('count', String(count));
      return call('GET', `/api/tasks/${id(taskId)}/sessions/${id(sessionId)}/output?${q}`);
    },
    activity(query = {}) {
      const q = new URLSearchParams();
      if (query.minutes !== undefined) q.set('minutes', String(query.minutes));
      if (query.at !== undefined) q.set('at', query.at);
      return call('GET', `/api/admin/activity?${q}`);
    },
    clusterNodes: () =>
      call<{ nodes: ClusterNodeView[] }>('GET', '/api/admin/nodes').then((r) => r.nodes),
    async outputFile(taskId, sessionId) {
      const path = `/api/tasks/${id(taskId)}/sessions/${id(sessionId)}/output.txt`;
      const res = await request('GET', path);
      if (!res.ok) throw refusal(res, await res.json().catch(() => undefined));
      return res.blob();
    },
  };
}
