/// <reference lib="dom" />
/**
 * The page: a header (the create form for a user; none for the admin, whose
 * token cannot own tasks), the errors, and the board or a job's page by the
 * URL fragment (`#/jobs/<taskId>`). The board's read model is the client's
 * store; the pool and the server's run statistics are polled.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { CreateTaskInput, PoolSnapshot } from '../../board/boardPort.js';
import type { BoardWindow } from '../../board/boardWindow.js';
import type { BoardApi } from '../../client/boardApi.js';
import type { BoardClient } from '../../client/boardClient.js';
import { watchWindow } from '../../client/boardQuery.js';
import type { BoardContext } from '../../client/boardStore.js';
import { AdminView } from './AdminView.js';
import { BoardColumns } from './BoardColumns.js';
import type { CardActions } from './CardView.js';
import { CreateForm } from './CreateForm.js';
import { ErrorList, type ShownError } from './ErrorList.js';
import { JobPage } from './JobPage.js';
import { useEstimates } from './useEstimates.js';

const POLL_MS = 5000;

/** What the page polls from the server besides the socket. */
export interface Polled {
  pool: PoolSnapshot | null;
  engine: string;
  recentDurationsMs: number[];
}

function usePolled(api: BoardApi): Polled {
  const [polled, setPolled] = useState<Polled>({
    pool: null,
    engine: 'available',
    recentDurationsMs: [],
  });
  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      const [pool, health, stats] = await Promise.all([
        api.pool().catch(() => null),
        fetch('/healthz')
          .then((r) => r.json() as Promise<{ engine?: string }>)
          .catch(() => ({ engine: undefined })),
        api.stats().catch(() => null),
      ]);
      if (stopped) return;
      setPolled((p) => ({
        pool: pool ?? p.pool,
        // The node's container engine: while it is down, starts are held.
        engine: health.engine ?? 'available',
        recentDurationsMs: stats?.recentDurationsMs ?? p.recentDurationsMs,
      }));
    };
    void poll();
    const timer = setInterval(() => void poll(), POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api]);
  return polled;
}

function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onHash = () => setHash(location.hash);
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  return hash;
}

function useStore(client: BoardClient): BoardContext {
  const [ctx, setCtx] = useState(() => client.store.getSnapshot().context);
  useEffect(() => {
    const sub = client.store.subscribe((snap) => setCtx(snap.context));
    // Effects run after the first paint: a frame the client applied since the
    // first render (the early socket's snapshot can land in that gap) went to
    // no subscriber, so read the store once more now that one listens.
    setCtx(client.store.getSnapshot().context);
    return () => sub.unsubscribe();
  }, [client]);
  return ctx;
}

export function App({ client, api }: { client: BoardClient; api: BoardApi }) {
  const ctx = useStore(client);
  const polled = usePolled(api);
  const hash = useRoute();
  const [errors, setErrors] = useState<ShownError[]>([]);
  const report = useCallback((err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    setErrors((es) => [...es, { id: Date.now() + Math.random(), message }]);
  }, []);
  const [actions] = useState<CardActions>(() => ({
    cancel: (taskId) => void api.cancel(taskId).catch(report),
    retry: (taskId) => void api.retry(taskId).catch(report),
  }));
  const admin = ctx.connection === 'live' && ctx.userId === null;
  const etas = useEstimates(ctx, polled.pool, polled.recentDurationsMs);
  const held =
    polled.engine === 'unavailable' ? ' · container engine unavailable: starts are held' : '';
  useEffect(() => {
    document.body.dataset.connection = ctx.connection;
    document.body.dataset.engine = polled.engine;
    document.body.dataset.view = admin ? 'admin' : 'user';
  }, [ctx.connection, polled.engine, admin]);
  const onCreate = (input: CreateTaskInput) =>
    api.createTask(input).catch((err: unknown) => {
      report(err);
      throw err;
    });
  const jobPath = /^#\/jobs\/(.+)$/.exec(hash)?.[1];
  const jobId = jobPath === undefined ? null : decodeURIComponent(jobPath);
  // The board's columns subscribe to their own window; a job page follows its task only.
  const setWindow = useCallback((w: BoardWindow) => client.setWindow(w), [client]);
  useEffect(() => {
    if (jobId !== null) setWindow(watchWindow(jobId));
  }, [jobId, setWindow]);
  return (
    <>
      <header>
        <a class="brand" href="#/">
          roundtable
        </a>
        {!admin && ctx.userId !== null && <CreateForm onCreate={onCreate} />}
        <span class="status" id="status" role="status">
          {ctx.connection}
          {ctx.userId ? ` as ${ctx.userId}` : admin ? ' as admin' : ''} · seq {ctx.seq}
          {held}
        </span>
      </header>
      <ErrorList
        errors={errors}
        onDismiss={(id) => setErrors((es) => es.filter((e) => e.id !== id))}
      />
      {jobId !== null ? (
        <JobPage
          key={jobPath}
          api={api}
          taskId={jobId}
          card={ctx.cards[jobId]}
          admin={admin}
          actions={actions}
          report={report}
        />
      ) : (
        <>
          {admin && <AdminView api={api} />}
          <BoardColumns
            ctx={ctx}
            admin={admin}
            etas={etas}
            actions={actions}
            setWindow={setWindow}
          />
        </>
      )}
    </>
  );
}
