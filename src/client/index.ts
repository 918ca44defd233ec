/**
 * `roundtable/client`: the board's typed client for Node and the browser.
 * Nothing here imports `node:*`.
 */
export type {
  BoardCard,
  Column,
  CreateTaskInput,
  PoolSnapshot,
  SessionStatus,
} from '../ui-server/boardPort.js';
export { type BackoffPolicy, backoffDelay, DEFAULT_BACKOFF } from './backoff.js';
export { type BoardApi, BoardApiError, createBoardApi } from './boardApi.js';
export {
  type BoardClient,
  type BoardClientOptions,
  type ClientTimers,
  connectBoard,
  type WebSocketConstructor,
  type WebSocketLike,
} from './boardClient.js';
export * from './boardProtocol.js';
export {
  type BoardContext,
  type BoardStore,
  cardsInColumn,
  createBoardStore,
  EMPTY_BOARD,
} from './boardStore.js';
