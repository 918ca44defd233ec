/// <reference lib="dom" />
/**
 * The admin's list of the cluster's boots (GET /api/admin/nodes), asked for
 * again every few seconds: node and boot, up since, the last heartbeat's
 * age (ticking between fetches), how long a beat vouches for it (its own
 * window, `--dead-after-ms`), the running sessions it owns, whether
 * Postgres shows its boot lock held, and the liveness verdict the node
 * answering draws from those (docs/operations.md, liveness).
 */
import { useCallback } from 'preact/hooks';
import type { ClusterNodeView } from '../../board/boardPort.js';
import type { BoardApi } from '../../client/boardApi.js';
import { Elapsed, span } from './ticker.js';
import { usePoll } from './usePoll.js';

/** How often the list is asked for again: well inside a heartbeat period. */
export const NODES_REFRESH_MS = 2_000;

function NodeRow({ n }: { n: ClusterNodeView }) {
  return (
    <tr data-owner={n.owner} data-liveness={n.liveness} data-lock={n.lock}>
      <td>
        {n.nodeId}
        {n.self && <span class="muted"> (this node)</span>}
      </td>
      <td class="mono">{n.bootId}</td>
      <td>
        <time dateTime={n.since} title={n.since}>
          <Elapsed iso={n.since} />
        </time>
      </td>
      <td>
        <time dateTime={n.lastBeat} title={n.lastBeat}>
          <Elapsed iso={n.lastBeat} /> ago
        </time>
      </td>
      <td class="num">{span(n.deadAfterMs)}</td>
      <td class="num">{n.sessionsOwned}</td>
      <td>{n.lock}</td>
      <td class={`verdict ${n.liveness}`}>{n.liveness}</td>
    </tr>
  );
}

export function NodesList({ api }: { api: BoardApi }) {
  const fetchIt = useCallback(() => api.clusterNodes(), [api]);
  const { value: nodes, error } = usePoll(fetchIt, NODES_REFRESH_MS);
  return (
    <section class="nodes" aria-labelledby="nodes-title" data-loaded={nodes !== null}>
      <h2 id="nodes-title">
        Nodes <span class="count">{nodes?.length ?? ''}</span>
      </h2>
      {error && <p class="stale">nodes: {error}</p>}
      {/* Wider than a phone: scrolled sideways, so reachable by keyboard too. */}
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region is a focus stop (WCAG 2.1.1) */}
      <div class="scroll" tabIndex={0}>
        <table>
          <thead>
            <tr>
              <th scope="col">node</th>
              <th scope="col">boot</th>
              <th scope="col">up for</th>
              <th scope="col">last beat</th>
              <th scope="col" class="num" title="silent this long (no beat), the node is dead">
                dead after
              </th>
              <th scope="col" class="num">
                sessions owned
              </th>
              <th scope="col">lock</th>
              <th scope="col">verdict</th>
            </tr>
          </thead>
          <tbody>
            {(nodes ?? []).map((n) => (
              <NodeRow key={n.owner} n={n} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
