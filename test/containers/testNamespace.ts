/**
 * A namespace no other test file or run uses. Every suite that talks to a
 * shared engine builds its backends in one, so parallel vitest workers (and
 * a second checkout on the same engine) never list, re-pin or sweep each
 * other's runs. Public with the contract suite (roundtable/testing/contract).
 */
export { testNamespace } from '../../src/testing/containerContract.js';
