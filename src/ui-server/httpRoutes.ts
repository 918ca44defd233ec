/**
 * The HTTP API's routes (src/ui-server/httpApi.ts): which route a method
 * and a path name, with the ids in the path, or the 404 or 405 the API
 * answers instead. Kept apart so what the board serves is one table.
 */
import { UiRequestError } from './listenerGuard.js';

const ID = '([A-Za-z0-9_.:-]{1,128})';
const ROUTES = [
  { method: 'GET', pattern: /^\/$/, name: 'page' },
  { method: 'GET', pattern: /^\/board\.js$/, name: 'script' },
  { method: 'GET', pattern: /^\/board-charts\.js$/, name: 'chartEngine' },
  { method: 'GET', pattern: /^\/healthz$/, name: 'health' },
  { method: 'GET', pattern: /^\/readyz$/, name: 'ready' },
  { method: 'GET', pattern: /^\/metrics$/, name: 'metrics' },
  { method: 'GET', pattern: /^\/api\/pool$/, name: 'pool' },
  { method: 'GET', pattern: /^\/api\/stats$/, name: 'stats' },
  { method: 'GET', pattern: /^\/api\/admin\/nodes$/, name: 'nodes' },
  { method: 'GET', pattern: /^\/api\/admin\/status$/, name: 'status' },
  { method: 'GET', pattern: /^\/api\/admin\/activity$/, name: 'activity' },
  { method: 'POST', pattern: /^\/api\/tasks$/, name: 'create' },
  { method: 'GET', pattern: new RegExp(`^/api/tasks/${ID}$`), name: 'task' },
  {
    method: 'GET',
    pattern: new RegExp(`^/api/tasks/${ID}/sessions/${ID}/output$`),
    name: 'output',
  },
  {
    method: 'GET',
    pattern: new RegExp(`^/api/tasks/${ID}/sessions/${ID}/output\\.txt$`),
    name: 'download',
  },
  { method: 'POST', pattern: new RegExp(`^/api/tasks/${ID}/cancel$`), name: 'cancel' },
  { method: 'POST', pattern: new RegExp(`^/api/tasks/${ID}/retry$`), name: 'retry' },
  { method: 'PUT', pattern: new RegExp(`^/api/users/${ID}/cap$`), name: 'cap' },
] as const satisfies ReadonlyArray<{ method: string; pattern: RegExp; name: string }>;

/** The name of one of the API's routes. */
export type RouteName = (typeof ROUTES)[number]['name'];

/** The route a request names, with the path's ids decoded ('' where it has none). */
export interface MatchedRoute {
  name: RouteName;
  /** The path's first id (a task, a user). */
  param: string;
  /** The path's second id (a session). */
  second: string;
}

/**
 * Whether a path is one of the board's HTTP routes (any method), for a board
 * mounted on an app's server to tell its paths from the app's.
 *
 * @example
 * ```ts
 * isBoardPath('/api/tasks/t1') // => true
 * isBoardPath('/jobs') // => false
 * ```
 */
export function isBoardPath(path: string): boolean {
  return path.startsWith('/api/') || ROUTES.some((r) => r.pattern.test(path));
}

/**
 * The route `method` and `path` name. A HEAD is its path's GET route (Node
 * sends the answer's headers and leaves out the body), which load balancers
 * probe `/healthz` and `/readyz` with. Throws a `UiRequestError`: 404 when no route has the
 * path, 405 (with `allow`) when none has it for this method.
 *
 * @example
 * ```ts
 * matchRoute('GET', '/api/tasks/t1/sessions/s1/output') // => { name: 'output', param: 't1', second: 's1' }
 * matchRoute('PUT', '/api/users/a:b/cap') // => { name: 'cap', param: 'a:b', second: '' }
 * matchRoute('HEAD', '/healthz') // => { name: 'health', param: '', second: '' }
 * matchRoute('HEAD', '/readyz') // => { name: 'ready', param: '', second: '' }
 * matchRoute('GET', '/nowhere') // throws UiRequestError
 * matchRoute('DELETE', '/api/tasks') // throws UiRequestError
 * matchRoute('HEAD', '/api/tasks') // throws UiRequestError
 * ```
 */
export function matchRoute(method: string | undefined, path: string): MatchedRoute {
  const matching = ROUTES.filter((r) => r.pattern.test(path));
  if (matching.length === 0) throw new UiRequestError(404, 'not_found', `no route ${path}`);
  const asMethod = method === 'HEAD' ? 'GET' : method;
  const r = matching.find((m) => m.method === asMethod);
  if (r === undefined) {
    const allow = matching
      .flatMap((m) => (m.method === 'GET' ? ['GET', 'HEAD'] : [m.method]))
      .join(', ');
    throw new UiRequestError(405, 'method_not_allowed', `use ${allow}`, { headers: { allow } });
  }
  const groups = r.pattern.exec(path);
  return {
    name: r.name,
    param: decodeURIComponent(groups?.[1] ?? ''),
    second: decodeURIComponent(groups?.[2] ?? ''),
  };
}
