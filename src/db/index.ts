/**
 * The durable store: connect, migrate, and the typed repositories the pool,
 * runners, Reconciler and board use. Rows are the truth; actors index them.
 */
export { type ActivityRows, MAX_ACTIVITY_MINUTES, readActivity } from './activitySeries.js';
export {
  type AdoptManyInput,
  type AdoptManyResult,
  adoptMany,
  MAX_ADOPT_BATCH,
} from './adoptMany.js';
export {
  ADVISORY_LOCKS,
  type AdvisoryLockName,
  BOOT_LOCK_NAMESPACE,
  LOCK_NAMESPACE,
} from './advisoryLocks.js';
export {
  type BootLock,
  type BootLockConfig,
  type BootLockState,
  bootLockKey,
  heldBootKeys,
  holdBootLock,
} from './bootLock.js';
export { type CompareAndSetInput, compareAndSet } from './compareAndSet.js';
export {
  CONNECT_DEFAULTS,
  type ConnectOptions,
  connect,
  type DbHandle,
  type Engine,
  PGLITE_DEADLINES,
} from './connect.js';
export {
  POOLERS,
  type Pooler,
  QUERY_TIMEOUT_MARGIN_MS,
  validateConnectOptions,
} from './connectOptions.js';
export type { ListenTimers } from './dedicatedClient.js';
export {
  CLI_TICK_OWNER,
  currentTick,
  type DispatchChanges,
  type EnforcedCaps,
  positionsOf,
  type RepairResult,
  readChanges,
  readEnforcedCaps,
  readLines,
  repairDispatch,
  repairDispatchReport,
  vacuumDispatch,
} from './dispatchReads.js';
export * from './errors.js';
export { finishRun } from './finishRun.js';
export {
  assertId,
  assertName,
  ID_PREFIX,
  type IdKind,
  isId,
  newId,
} from './ids.js';
export { TEXT_LIMITS } from './inputs.js';
export { KEY_IN_USE, keyTakenBy } from './keyTakenBy.js';
export {
  deposeLeader,
  holdLeaderLock,
  type LeaderLock,
  type LeaderLockConfig,
  type LeaderState,
  LeadershipLostError,
  leaderBackend,
} from './leaderLock.js';
export { type LineStatusRows, readLineStatus } from './lineStatus.js';
export {
  assertChannel,
  type ListenState,
  listenRetryDelay,
  type Unlisten,
} from './listen.js';
export { type LivenessReading, readLiveness } from './livenessReading.js';
export {
  type KnownTail,
  LIVE_TAIL_LINE_CHARS,
  LIVE_TAIL_LINES,
  LIVE_TAILS_PER_STATEMENT,
  type LiveTail,
  type LiveTailsWrite,
  type LiveTailsWritten,
  readLiveTails,
  writeLiveTails,
} from './liveTails.js';
export {
  MIGRATE_LOCK_WAIT_MS,
  MIGRATIONS,
  type MigrateClock,
  type MigrateOptions,
  type MigrateResult,
  type Migration,
  migrate,
} from './migrations.js';
export {
  type BeatInput,
  beat,
  endBeat,
  listBeats,
  MAX_STALE_AFTER_MS,
  type NodeBeat,
  type OwnerBeat,
  ownerBeat,
  pruneHeartbeats,
  runningByOwner,
  setWatching,
} from './nodeHeartbeats.js';
export { OUTPUT_CHUNK_BYTES } from './outputChunkBytes.js';
export {
  DOWNLOAD_PIECES_PER_READ,
  MAX_OUTPUT_PAGE_BYTES,
  type OutputPageRange,
  type OutputRef,
  readOutputPage,
  readOutputPieces,
} from './outputPages.js';
export { pingStore } from './pingStore.js';
export {
  MAX_PRUNE_BATCH,
  PRUNE_BATCH,
  type PruneFinishedInput,
  pruneFinished,
} from './pruneFinished.js';
export { MAX_RECENT_RUNS, type RecentRun, recentRuns } from './recentRuns.js';
export { type RetryTaskInput, retryTask } from './retryTask.js';
export type { Session, SessionEvent, Task, TaskSummary } from './rows.js';
export { parseRunSpec, RUN_SPEC_LIMITS, type RunSpec } from './runSpec.js';
export type { BackendKind, Database, SessionKind, SessionStatus } from './schema.js';
export { SESSION_STATUSES } from './schema.js';
export {
  cutMarker,
  finishWithOutput,
  fitOutput,
  getSessionOutput,
  type RunOutputInput,
  SESSION_OUTPUT_LIMIT_BYTES,
  type SessionOutput,
  writtenBytes,
} from './sessionOutputs.js';
export {
  countRunning,
  getSession,
  type ListQueuedOptions,
  type ListRunningOptions,
  listQueued,
  listRunning,
  listSessionEvents,
  listSessionEventsForUser,
  listSessionsForTask,
  sessionStates,
} from './sessionQueries.js';
export {
  type AdoptInput,
  adopt,
  type CancelInput,
  type ClaimInput,
  cancel,
  claim,
  type FinishInput,
  finish,
  type RecordHandleInput,
  type RequeueInput,
  recordHandle,
  requeue,
} from './sessionTransitions.js';
export { TICK_CHANNEL } from './sql/tickChannel.js';
export { OUTPUT_TAIL_CHARS, outputTailSql, storedTail } from './storedTail.js';
export {
  getTaskOutput,
  getTaskRecord,
} from './taskDetail.js';
export {
  type CreateTaskInput,
  createTasksWithSessions,
  createTaskWithSession,
  DEFAULT_COLUMN,
  getTask,
  getTaskForUser,
  listTasksForUser,
  MAX_BATCH,
  type UpdateTaskColumnInput,
  updateTaskColumn,
} from './tasks.js';
export { parseTickReply, tick } from './tick.js';
export type * from './tickTypes.js';
export { type Db, inTransaction } from './transaction.js';
export {
  DbTimeoutError,
  type DbTimeoutKind,
  isDataException,
  isTransientDbError,
  transientReason,
} from './transientErrors.js';
export { getUserCaps, type SetUserCapInput, setUserCap } from './userCaps.js';
export { MAX_TICK_OPS, validateTickOp } from './validateTickOp.js';
