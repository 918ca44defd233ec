/** roundtable/testing: the simulation harness users' test suites import. */
export {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from './createTestRuntime.js';
export { TestClock } from './TestClock.js';
