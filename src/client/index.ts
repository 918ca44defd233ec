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
  UserAtCap,
} from '../board/boardPort.js';
export * from '../board/boardProtocol.js';
export * from '../board/boardWindow.js';
export { type BackoffDelays, backoffDelay } from '../common/backoff.js';
export { type BoardApi, BoardApiError, createBoardApi } from './boardApi.js';
export {
  type BoardClient,
  type BoardClientOptions,
  type ClientTimers,
  connectBoard,
  DEFAULT_BACKOFF,
  type WebSocketConstructor,
  type WebSocketLike,
} from './boardClient.js';
export {
  type BoardContext,
  type BoardStore,
  cardsInColumn,
  createBoardStore,
  EMPTY_BOARD,
} from './boardStore.js';
