/**
 * roundtable: the public entry point of the package. The layers below have
 * entry points of their own (`roundtable/supervisor`, `roundtable/machines`,
 * `roundtable/testing`, `roundtable/client`); this one assembles a node.
 */

// What the runtime's `onError` is told besides errors (docs/library.md, "Where background errors go").
export { BootLockLostError, OwnerDownNotice } from './actors/clusterLivenessWiring.js';
export { OverdueRunTakenNotice } from './actors/overdueRuns.js';
export { createRuntime } from './actors/runtime.js';
export {
  RuntimeListenerError,
  type RuntimeListenerKind,
} from './actors/runtimeListenerError.js';
export { defaultNodeId, RUNTIME_DEFAULTS, RuntimeOptionError } from './actors/runtimeOptions.js';
export {
  type CreatedTask,
  describeRuntimeExit,
  type Runtime,
  type RuntimeCaps,
  type RuntimeCard,
  RuntimeCommandError,
  type RuntimeExit,
  type RuntimeOptions,
  RuntimeStoppedError,
  type RuntimeTaskInput,
} from './actors/runtimeTypes.js';
export { type SubmissionProblem, submissionProblem } from './board/submission.js';
export type {
  AttachOptions,
  ContainerBackend,
  ExitMarker,
  Observation,
  PingResult,
  RepinResult,
  RunExit,
  RunOutput,
  RunRef,
  RunSpec,
  StartResult,
} from './containers/ContainerBackend.js';
export { ContainerError, type ContainerErrorCode } from './containers/ContainerError.js';
export { DockerBackend } from './containers/docker/DockerBackend.js';
export { SwarmBackend } from './containers/docker/SwarmBackend.js';
export { LocalBackend, type LocalBackendOptions } from './containers/local/LocalBackend.js';
// For a backend of one's own, as docs/containers.md asks of one: the session
// id rule, the run's name and its labels.
export { runLabels } from './containers/namespace.js';
export { SimulatedBackend } from './containers/simulated/SimulatedBackend.js';
export { SimulatedCluster } from './containers/simulated/SimulatedCluster.js';
export { handleFor, validateSessionId } from './containers/wrapper.js';
// What `connect`, `migrate` and `onPoolError` say (docs/operations.md), told apart by class or `code`.
export {
  ConnectError,
  connect,
  DbTimeoutError,
  isTransientDbError,
  MigrationError,
  migrate,
  PooledSessionError,
  StoreClosedError,
} from './db/index.js';
export { createUiServer, type UiServer } from './ui-server/createUiServer.js';
export { createInspector } from './ui-server/inspector/createInspector.js';
export { InspectorConfigError } from './ui-server/inspector/inspectorOptions.js';
export {
  type InspectorServer,
  type InspectorServerOptions,
  startInspectorServer,
} from './ui-server/inspector/startInspectorServer.js';
export {
  capConnections,
  httpServerOptions,
  LISTENER_LIMIT_KEYS,
  type ListenerLimits,
} from './ui-server/listenerLimits.js';
export {
  type MountedUiServer,
  type MountOptions,
  mountUiServer,
} from './ui-server/mountUiServer.js';
// What a misconfigured board is refused with (docs/board-protocol.md, "Limits"), and the defaults.
export { UI_SERVER_DEFAULTS, UiServerConfigError } from './ui-server/uiServerOptions.js';
