/// <reference lib="dom" />
/**
 * The four columns: a filter bar (title or id, status, and for the admin
 * the user), each column's count, and one page of each column (PAGE_SIZE
 * cards, earlier and later pages on buttons). The filter and the pages are
 * the window the page subscribes to: the server sends only those cards (and
 * every count), so a line of any length costs the page a page per column.
 * Cards are keyed by task id: an update re-renders its own cards only.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Column, SessionStatus } from '../../board/boardPort.js';
import type { BoardWindow } from '../../board/boardWindow.js';
import {
  type BoardFilter,
  boardWindow,
  type ColumnOffsets,
  type ColumnPage,
  columnPage,
  FIRST_PAGES,
  NO_FILTER,
  PAGE_SIZE,
} from '../../client/boardQuery.js';
import type { BoardContext } from '../../client/boardStore.js';
import { type CardActions, CardView } from './CardView.js';

/** How long the search box waits for typing to pause before it asks the server. */
const TYPING_MS = 150;

const COLUMNS: Array<{ column: Column; label: string }> = [
  { column: 'queued', label: 'Queued' },
  { column: 'running', label: 'Running' },
  { column: 'done', label: 'Done' },
  { column: 'failed', label: 'Failed' },
];

const STATUSES: SessionStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

interface Props {
  ctx: BoardContext;
  admin: boolean;
  /** Expected start, ms from now, by task id (queued cards). */
  etas: Readonly<Record<string, number>>;
  actions: CardActions;
  /** Subscribes to the window the page shows. */
  setWindow: (window: BoardWindow) => void;
}

function FilterBar(props: {
  filter: BoardFilter;
  users: string[];
  admin: boolean;
  onChange: (f: BoardFilter) => void;
}) {
  const { filter, onChange } = props;
  return (
    <form class="filters" aria-label="filter cards" onSubmit={(e) => e.preventDefault()}>
      <input
        type="search"
        name="q"
        aria-label="search titles and ids"
        placeholder="search title or id"
        value={filter.text}
        onInput={(e) => onChange({ ...filter, text: e.currentTarget.value })}
      />
      <select
        name="status"
        aria-label="status"
        value={filter.status}
        onChange={(e) =>
          onChange({ ...filter, status: e.currentTarget.value as BoardFilter['status'] })
        }
      >
        <option value="">any status</option>
        {STATUSES.map((s) => (
          <option value={s} key={s}>
            {s}
          </option>
        ))}
      </select>
      {props.admin && (
        <select
          name="user"
          aria-label="user"
          value={filter.user}
          onChange={(e) => onChange({ ...filter, user: e.currentTarget.value })}
        >
          <option value="">every user</option>
          {props.users.map((u) => (
            <option value={u} key={u}>
              {u}
            </option>
          ))}
        </select>
      )}
    </form>
  );
}

function ColumnView(props: {
  column: Column;
  label: string;
  page: ColumnPage;
  offset: number;
  onPage: (offset: number) => void;
  admin: boolean;
  etas: Readonly<Record<string, number>>;
  actions: CardActions;
}) {
  const { page, offset, column } = props;
  const shown = page.cards.length;
  return (
    <section data-column={column} aria-labelledby={`h-${column}`}>
      <h2 id={`h-${column}`}>
        {props.label} <span class="count">{page.total}</span>
      </h2>
      <div class="cards">
        {page.cards.map((card) => (
          <CardView
            key={card.taskId}
            card={card}
            eta={props.etas[card.taskId]}
            showUser={props.admin}
            actions={props.actions}
          />
        ))}
      </div>
      {page.total > PAGE_SIZE && (
        <nav class="pages" aria-label={`${props.label} pages`}>
          <button
            type="button"
            class="earlier"
            disabled={offset === 0}
            onClick={() => props.onPage(Math.max(0, offset - PAGE_SIZE))}
          >
            earlier
          </button>
          <span class="range">
            {shown === 0 ? 0 : offset + 1}–{offset + shown} of {page.total}
          </span>
          <button
            type="button"
            class="later"
            disabled={offset + PAGE_SIZE >= page.total}
            onClick={() => props.onPage(offset + PAGE_SIZE)}
          >
            later
          </button>
        </nav>
      )}
    </section>
  );
}

export function BoardColumns({ ctx, admin, etas, actions, setWindow }: Props) {
  const [filter, setFilter] = useState<BoardFilter>(NO_FILTER);
  const [offsets, setOffsets] = useState<ColumnOffsets>(FIRST_PAGES);
  // The window follows the filter (typing settles first) and the pages.
  useEffect(() => {
    const timer = setTimeout(
      () => setWindow(boardWindow(filter, offsets, PAGE_SIZE)),
      filter.text === '' ? 0 : TYPING_MS,
    );
    return () => clearTimeout(timer);
  }, [filter, offsets, setWindow]);
  // A page left past the end (the line drained under it) steps back to the last one.
  useEffect(() => {
    for (const { column } of COLUMNS) {
      const total = ctx.counts[column];
      if (offsets[column] > 0 && offsets[column] >= total) {
        const last = Math.max(0, Math.ceil(total / PAGE_SIZE) - 1) * PAGE_SIZE;
        setOffsets((o) => ({ ...o, [column]: last }));
      }
    }
  }, [ctx.counts, offsets]);
  const changeFilter = (f: BoardFilter) => {
    setFilter(f);
    setOffsets(FIRST_PAGES);
  };
  return (
    <>
      <FilterBar
        filter={filter}
        users={admin ? ctx.users : []}
        admin={admin}
        onChange={changeFilter}
      />
      <main>
        {COLUMNS.map(({ column, label }) => (
          <ColumnView
            key={column}
            column={column}
            label={label}
            page={columnPage(ctx, column)}
            offset={offsets[column]}
            onPage={(offset) => setOffsets((o) => ({ ...o, [column]: offset }))}
            admin={admin}
            etas={etas}
            actions={actions}
          />
        ))}
      </main>
    </>
  );
}
