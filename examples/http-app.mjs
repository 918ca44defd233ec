// @ts-check
// roundtable embedded in a plain node:http app: POST /jobs submits a job for
// the user, GET /jobs/<taskId> says where it is; the board and the inspector
// are mounted on the app's own server (one port, their own tokens); SIGTERM stops taking
// requests, stops the runtime (running jobs are left to be adopted by the
// next start) and closes the store, then the process exits 0.
// docs/library.md walks through it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connect,
  createInspector,
  createRuntime,
  LocalBackend,
  migrate,
  mountUiServer,
  OwnerDownNotice,
} from 'roundtable';

/**
 * The app's log: one JSON line on stderr (stdout carries the addresses).
 * @param {'info' | 'warn'} level
 * @param {string} msg
 * @param {Record<string, unknown>} [fields]
 */
function log(level, msg, fields = {}) {
  process.stderr.write(`${JSON.stringify({ level, msg, ...fields })}\n`);
}

const store = await connect({
  dataDir: process.env.APP_DATA_DIR ?? 'memory://',
  // A pooled connection the server ended, a listener or lock reconnecting:
  // never thrown (the pool opens another), so into the app's log, not stderr's warnings.
  onPoolError: (error) => log('warn', 'store connection error', { err: error.message }),
});
await migrate(store.db);
const inspector = createInspector();
const runtime = await createRuntime({
  db: store.db,
  backend: new LocalBackend({
    baseDir: process.env.APP_RUNS_DIR ?? mkdtempSync(join(tmpdir(), 'app-runs-')),
  }),
  inspect: inspector.observer,
  // Errors no caller awaits, and the cluster's notices: another boot that
  // stopped on purpose (a rolling deploy) is news, any other a warning.
  onError: (error) =>
    error instanceof OwnerDownNotice && error.reason === 'no_beat'
      ? log('info', error.message, { owner: error.owner })
      : log('warn', 'roundtable background report', { err: String(error) }),
});
// One shape for tokens everywhere: user id -> token.
const tokens = {
  admin: randomBytes(16).toString('hex'),
  users: { ann: randomBytes(16).toString('hex') },
};
// The board's paths (/, /board.js, /healthz, /metrics, /api/..., /inspect..., the
// sockets /ws and /inspect/ws) are answered by it; every other path is the app's.
const board = await mountUiServer({ source: runtime, commands: runtime, tokens, inspector });

/**
 * @param {import('node:http').ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 */
function reply(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** @type {Record<string, number>} the runtime's command error codes as HTTP statuses */
const ERROR_STATUS = { invalid: 422, conflict: 409 };

const app = createServer((req, res) => {
  if (board.handleRequest(req, res)) return;
  const url = new URL(req.url ?? '/', 'http://app');
  const user = url.searchParams.get('user') ?? 'ann';
  if (req.method === 'POST' && url.pathname === '/jobs') {
    // A client that lost the answer sends the same Idempotency-Key again and
    // gets the job it already has (200) instead of a second run.
    const key = req.headers['idempotency-key'];
    runtime
      .submit(user, {
        title: 'hello',
        image: 'local',
        command: ['echo', `hello ${user}`],
        ...(typeof key === 'string' ? { key } : {}),
      })
      .then((created) =>
        reply(res, created.replayed ? 200 : 201, {
          taskId: created.task.id,
          position: created.position,
        }),
      )
      .catch((/** @type {Error & { code?: string }} */ error) =>
        reply(res, ERROR_STATUS[error.code ?? ''] ?? 503, { error: error.message }),
      );
    return;
  }
  const job = /^\/jobs\/([\w-]+)$/.exec(url.pathname);
  if (req.method === 'GET' && job) {
    const card = runtime.cards(user).find((c) => c.taskId === job[1]);
    reply(res, card ? 200 : 404, card ?? { error: 'no such job' });
    return;
  }
  reply(res, 404, { error: 'not found' });
});
app.on('upgrade', (req, socket, head) => {
  if (!board.handleUpgrade(req, socket, head)) socket.destroy();
});
await new Promise((resolve) =>
  app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => resolve(undefined)),
);
const address = app.address();
const port = typeof address === 'object' && address !== null ? address.port : 0;
console.log(
  JSON.stringify({
    app: `http://127.0.0.1:${port}`,
    board: `http://127.0.0.1:${port}/#token=${tokens.users.ann}`,
    inspector: `http://127.0.0.1:${port}/inspect#token=${tokens.admin}`,
  }),
);

process.once('SIGTERM', async () => {
  app.close();
  await board.close();
  app.closeAllConnections();
  await runtime.stop();
  await store.close();
  console.log('stopped');
});
