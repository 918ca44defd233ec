/** roundtable/testing: the simulation harness users' test suites import. */

// The scripted commands (`commands`): the defaults, to extend rather than replace.
export {
  defaultCommands,
  type SimCommand,
  type SimCommandRegistry,
  type SimScript,
} from '../containers/simulated/commands.js';
// What the harness's rows and logs are, so a suite can name them in its own helpers.
export type { ExecRecord } from '../containers/simulated/SimulatedCluster.js';
export type { Session, SessionEvent, Task } from '../db/index.js';
export {
  createTestRuntime,
  HarnessClosedError,
  HarnessSettleError,
  type TestRuntime,
  type TestRuntimeOptions,
} from './createTestRuntime.js';
export { HarnessArgumentError } from './harnessArguments.js';
export type { AddNodeOptions } from './harnessNodes.js';
export { migratedPglite } from './migratedPglite.js';
export { TestClock } from './TestClock.js';
