/// <reference lib="dom" />
/**
 * One job (`#/jobs/<taskId>`): what it runs (image, argv, the names of its
 * environment variables), every attempt with its node, handle, timings and
 * why it ended, and an attempt's output: the live tail from the board while
 * it runs, the stored output (paged from the server, oldest pages on demand,
 * downloadable) once it has finished. Cancel and retry as on the card.
 */
import { useEffect, useState } from 'preact/hooks';
import type {
  BoardCard,
  OutputPage,
  TaskAttemptDetail,
  TaskDetail,
} from '../../board/boardPort.js';
import { formatTimeLimit } from '../../board/formatTimeLimit.js';
import type { BoardApi } from '../../client/boardApi.js';
import type { CardActions } from './CardView.js';
import { linesBefore } from './linesBefore.js';
import { OutputBox } from './OutputBox.js';
import { Left } from './ticker.js';

/** Lines fetched per page of stored output. */
const PAGE_LINES = 500;

const time = (iso: string | null) =>
  iso === null ? '–' : iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');

function took(from: string | null, to: string | null): string {
  if (from === null || to === null) return '–';
  const s = Math.max(0, Math.round((Date.parse(to) - Date.parse(from)) / 1000));
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

/** Why an attempt ended, in the store's words: its failure reason, else its last change's reason. */
function endedBecause(a: TaskAttemptDetail): string {
  if (a.failureReason !== null) return a.failureReason;
  const last = a.events.at(-1);
  if (a.status === 'queued' || a.status === 'running') return '–';
  return last?.reason ?? a.status;
}

function StoredOutput(props: {
  api: BoardApi;
  taskId: string;
  sessionId: string;
  report: (e: unknown) => void;
}) {
  const { api, taskId, sessionId, report } = props;
  const [page, setPage] = useState<OutputPage | null>(null);
  const [missing, setMissing] = useState(false);
  useEffect(() => {
    setPage(null);
    setMissing(false);
    api
      .outputPage(taskId, sessionId, undefined, PAGE_LINES)
      .then(setPage, (err: { status?: number }) => {
        if (err.status === 404) setMissing(true);
        else report(err);
      });
  }, [api, taskId, sessionId]);
  if (missing) return <p class="meta">no output stored for this attempt</p>;
  if (page === null) return <p class="meta">loading output…</p>;
  const earlier = () => {
    linesBefore(
      (from, count) => api.outputPage(taskId, sessionId, from, count),
      page.from,
      PAGE_LINES,
    ).then((older) => {
      if (older !== null)
        setPage({ ...page, from: older.from, lines: [...older.lines, ...page.lines] });
    }, report);
  };
  const download = () =>
    api.outputFile(taskId, sessionId).then((blob) => {
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = `${taskId}-${sessionId}.log`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
    }, report);
  return (
    <div class="stored">
      <p class="meta">
        lines {page.totalLines === 0 ? 0 : page.from + 1}–{page.from + page.lines.length} of{' '}
        {page.totalLines}
        {page.truncated ? ` · cut: the last part of ${page.totalBytes} bytes is kept` : ''}
      </p>
      {page.from > 0 && (
        <button type="button" class="earlier" onClick={earlier}>
          load earlier lines
        </button>
      )}
      <button type="button" class="download" onClick={download}>
        download
      </button>
      <OutputBox lines={page.lines} />
    </div>
  );
}

export function JobPage(props: {
  api: BoardApi;
  taskId: string;
  /** The task's card on the board, when the board holds it: the live state and tail. */
  card: BoardCard | undefined;
  admin: boolean;
  actions: CardActions;
  report: (err: unknown) => void;
}) {
  const { api, taskId, card, report } = props;
  const [detail, setDetail] = useState<TaskDetail | null>(null);
  const [gone, setGone] = useState(false);
  const [chosen, setChosen] = useState<string | null>(null);
  // Read again whenever the card says something new happened to the task.
  const version = card === undefined ? '' : `${card.sessionId}/${card.status}/${card.column}`;
  useEffect(() => {
    api.task(taskId).then(setDetail, (err: { status?: number }) => {
      if (err.status === 404) setGone(true);
      else report(err);
    });
  }, [api, taskId, version]);
  if (gone)
    return (
      <section class="job">
        <p>no job {taskId} (or not yours)</p>
        <a href="#/">back to the board</a>
      </section>
    );
  if (detail === null)
    return (
      <section class="job">
        <p>loading {taskId}…</p>
      </section>
    );
  const latest = detail.attempts.at(-1);
  const shown = detail.attempts.find((a) => a.sessionId === chosen) ?? latest;
  const live =
    card !== undefined &&
    shown !== undefined &&
    card.sessionId === shown.sessionId &&
    card.column !== 'done' &&
    card.column !== 'failed';
  const column = card?.column ?? (latest?.status === 'succeeded' ? 'done' : latest?.status);
  return (
    <section class="job" aria-labelledby="job-title">
      <p>
        <a href="#/">← board</a>
      </p>
      <h1 id="job-title">{detail.title}</h1>
      <dl>
        <dt>task</dt>
        <dd>{detail.taskId}</dd>
        <dt>user</dt>
        <dd>{detail.userId}</dd>
        <dt>image</dt>
        <dd>{detail.image}</dd>
        <dt>argv</dt>
        <dd class="argv-full">{JSON.stringify(detail.command)}</dd>
        <dt>env keys</dt>
        <dd>{detail.envKeys.length === 0 ? '–' : detail.envKeys.join(', ')}</dd>
        <dt>created</dt>
        <dd>{time(detail.createdAt)}</dd>
        {detail.submitKey !== undefined && (
          <>
            <dt>submit key</dt>
            <dd>{detail.submitKey}</dd>
          </>
        )}
        {detail.timeLimitMs !== undefined && (
          <>
            <dt>time limit</dt>
            <dd>
              {formatTimeLimit(detail.timeLimitMs)}
              {card?.running?.until != null && (
                // The run going now: how long the limit gives it.
                <span class="limit">
                  {' · '}
                  <Left iso={card.running.until} />
                </span>
              )}
            </dd>
          </>
        )}
      </dl>
      <p class="actions">
        {(column === 'queued' || column === 'running') && (
          <button type="button" class="cancel" onClick={() => props.actions.cancel(taskId)}>
            cancel
          </button>
        )}
        {(column === 'failed' || column === 'cancelled') && (
          <button type="button" class="retry" onClick={() => props.actions.retry(taskId)}>
            retry
          </button>
        )}
        {props.admin && latest !== undefined && (
          <a
            class="inspect"
            href={`/inspect#runner=${encodeURIComponent(latest.sessionId)}&task=${encodeURIComponent(taskId)}`}
          >
            its TaskRunner in the inspector
          </a>
        )}
      </p>
      <h2>Attempts</h2>
      <div class="scroll">
        <table>
          <thead>
            <tr>
              <th>#</th>
              <th>status</th>
              <th>ended because</th>
              <th>exit</th>
              <th>node</th>
              <th>handle</th>
              <th>queued</th>
              <th>started</th>
              <th>finished</th>
              <th>waited</th>
              <th>ran</th>
              <th>output</th>
            </tr>
          </thead>
          <tbody>
            {detail.attempts.map((a) => (
              <tr key={a.sessionId} data-session-id={a.sessionId} data-shown={a === shown}>
                <td>{a.attempt}</td>
                <td>{a.status}</td>
                <td class="why">{endedBecause(a)}</td>
                <td>{a.exitCode ?? '–'}</td>
                <td>{a.node ?? '–'}</td>
                <td>{a.handle ?? '–'}</td>
                <td>{time(a.enqueuedAt)}</td>
                <td>{time(a.startedAt ?? a.claimedAt)}</td>
                <td>{time(a.finishedAt)}</td>
                <td>{took(a.enqueuedAt, a.claimedAt)}</td>
                <td>{took(a.startedAt ?? a.claimedAt, a.finishedAt)}</td>
                <td>
                  <button type="button" class="show" onClick={() => setChosen(a.sessionId)}>
                    show
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {shown !== undefined && (
        <>
          <h2>Output of attempt {shown.attempt}</h2>
          {live ? (
            card.lastOutput.length > 0 ? (
              <>
                <p class="meta">
                  live: the last {card.lastOutput.length} lines (the whole output is stored when it
                  ends)
                </p>
                <OutputBox lines={card.lastOutput} />
              </>
            ) : (
              <p class="meta">no output yet</p>
            )
          ) : (
            <StoredOutput api={api} taskId={taskId} sessionId={shown.sessionId} report={report} />
          )}
        </>
      )}
    </section>
  );
}
