/** roundtable/testing: the simulation harness users' test suites import. */
export {
  createTestRuntime,
  type TestRuntime,
  type TestRuntimeOptions,
} from './createTestRuntime.js';
export { migratedPglite } from './migratedPglite.js';
export { TestClock } from './TestClock.js';
