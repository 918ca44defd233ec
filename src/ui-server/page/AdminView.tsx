/// <reference lib="dom" />
/**
 * What the admin's board shows above the columns: the last hour's charts
 * and the cluster's nodes. Only the admin's token may read either route.
 */
import type { BoardApi } from '../../client/boardApi.js';
import { Dashboard } from './Dashboard.js';
import { NodesList } from './NodesList.js';

export function AdminView({ api }: { api: BoardApi }) {
  return (
    <div class="admin-view">
      <Dashboard api={api} />
      <NodesList api={api} />
    </div>
  );
}
