// The contract suite is public (roundtable/testing/contract); the backends' test files import it from here.
export * from '../../src/testing/containerContract.js';
