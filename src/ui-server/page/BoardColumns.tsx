/// <reference lib="dom" />
/**
 * The four columns: a filter bar (title or id, status, and for the admin
 * the user), each column's count, and a page of each column (PAGE_SIZE cards,
 * "show more" for the next page), so a line of any length costs the page at
 * most a page of cards per column. Cards are keyed by task id: a patch
 * re-renders its own card and nothing else.
 */
import { useMemo, useState } from 'preact/hooks';
import type { Column, SessionStatus } from '../../board/boardPort.js';
import {
  type BoardFilter,
  type ColumnPage,
  columnPage,
  NO_FILTER,
  usersOf,
} from '../../client/boardQuery.js';
import type { BoardContext } from '../../client/boardStore.js';
import { type CardActions, CardView } from './CardView.js';

/** Cards drawn per column before "show more". */
export const PAGE_SIZE = 100;

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
  onMore: () => void;
  admin: boolean;
  etas: Readonly<Record<string, number>>;
  actions: CardActions;
}) {
  const { page } = props;
  const hidden = page.total - page.cards.length;
  return (
    <section data-column={props.column} aria-labelledby={`h-${props.column}`}>
      <h2 id={`h-${props.column}`}>
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
      {hidden > 0 && (
        <button type="button" class="more" onClick={props.onMore}>
          show {Math.min(hidden, PAGE_SIZE)} more of {hidden}
        </button>
      )}
    </section>
  );
}

export function BoardColumns({ ctx, admin, etas, actions }: Props) {
  const [filter, setFilter] = useState<BoardFilter>(NO_FILTER);
  const [limits, setLimits] = useState<Record<Column, number>>({
    queued: PAGE_SIZE,
    running: PAGE_SIZE,
    done: PAGE_SIZE,
    failed: PAGE_SIZE,
  });
  const users = useMemo(() => (admin ? usersOf(ctx) : []), [admin, ctx.cards]);
  return (
    <>
      <FilterBar filter={filter} users={users} admin={admin} onChange={setFilter} />
      <main>
        {COLUMNS.map(({ column, label }) => (
          <ColumnView
            key={column}
            column={column}
            label={label}
            page={columnPage(ctx, column, filter, limits[column])}
            onMore={() => setLimits({ ...limits, [column]: limits[column] + PAGE_SIZE })}
            admin={admin}
            etas={etas}
            actions={actions}
          />
        ))}
      </main>
    </>
  );
}
