/**
 * The route table: every route by its method and path, the 404 and the 405
 * (with the methods the path allows), the ids a path carries. What each
 * route answers is test/ui-server/httpApi.test.ts, over a server.
 */
import { expect, test } from 'vitest';
import * as routes from '../../src/ui-server/httpRoutes.js';
import { isBoardPath, matchRoute } from '../../src/ui-server/httpRoutes.js';
import { UiRequestError } from '../../src/ui-server/listenerGuard.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/httpRoutes.ts', import.meta.url), routes);

const refusal = (method: string, path: string) => {
  try {
    matchRoute(method, path);
  } catch (error) {
    if (error instanceof UiRequestError)
      return { status: error.status, code: error.code, headers: error.headers };
    throw error;
  }
  throw new Error(`${method} ${path} matched`);
};

test('each route by its method and path', () => {
  const cases: Array<[string, string, string]> = [
    ['GET', '/', 'page'],
    ['GET', '/board.js', 'script'],
    ['GET', '/board-charts.js', 'chartEngine'],
    ['GET', '/healthz', 'health'],
    ['GET', '/readyz', 'ready'],
    ['GET', '/metrics', 'metrics'],
    ['GET', '/api/pool', 'pool'],
    ['GET', '/api/stats', 'stats'],
    ['GET', '/api/admin/nodes', 'nodes'],
    ['GET', '/api/admin/status', 'status'],
    ['GET', '/api/admin/activity', 'activity'],
    ['POST', '/api/tasks', 'create'],
    ['GET', '/api/tasks/task_1', 'task'],
    ['GET', '/api/tasks/task_1/sessions/ses_1/output', 'output'],
    ['GET', '/api/tasks/task_1/sessions/ses_1/output.txt', 'download'],
    ['POST', '/api/tasks/task_1/cancel', 'cancel'],
    ['POST', '/api/tasks/task_1/retry', 'retry'],
    ['PUT', '/api/users/ann/cap', 'cap'],
  ];
  for (const [method, path, name] of cases) expect(matchRoute(method, path).name, path).toBe(name);
  expect(matchRoute('GET', '/api/tasks/task_1/sessions/ses_1/output.txt')).toEqual({
    name: 'download',
    param: 'task_1',
    second: 'ses_1',
  });
});

test('a path no route has is a 404; a method its routes do not take, a 405 that says which do', () => {
  expect(refusal('GET', '/api/nothing')).toMatchObject({ status: 404, code: 'not_found' });
  expect(refusal('GET', '/api/tasks/has space')).toMatchObject({ status: 404 });
  expect(refusal('GET', '/api/tasks/t1/cancel')).toEqual({
    status: 405,
    code: 'method_not_allowed',
    headers: { allow: 'POST' },
  });
  expect(refusal(undefined as unknown as string, '/api/pool')).toMatchObject({ status: 405 });
});

test('a HEAD is the GET route of its path, and a 405 offers it beside GET', () => {
  expect(matchRoute('HEAD', '/healthz').name).toBe('health');
  expect(matchRoute('HEAD', '/api/tasks/t1')).toEqual({ name: 'task', param: 't1', second: '' });
  expect(refusal('POST', '/healthz')).toMatchObject({
    status: 405,
    headers: { allow: 'GET, HEAD' },
  });
  expect(refusal('HEAD', '/api/tasks/t1/retry')).toMatchObject({
    status: 405,
    headers: { allow: 'POST' },
  });
});

test('an id longer than 128 characters names no route', () => {
  expect(refusal('GET', `/api/tasks/${'a'.repeat(129)}`)).toMatchObject({ status: 404 });
  expect(matchRoute('GET', `/api/tasks/${'a'.repeat(128)}`).name).toBe('task');
});

test('isBoardPath: every /api/ path, and the routes outside it', () => {
  expect(isBoardPath('/api/anything/at/all')).toBe(true);
  expect(isBoardPath('/healthz')).toBe(true);
  expect(isBoardPath('/board.js')).toBe(true);
  expect(isBoardPath('/app.js')).toBe(false);
});
