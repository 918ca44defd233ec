import * as fate from '../../src/actors/afterStoreFailure.js';
import * as errors from '../../src/db/errors.js';
import { DbTimeoutError } from '../../src/db/transientErrors.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/actors/afterStoreFailure.ts', import.meta.url), {
  ...fate,
  StoreClosedError: errors.StoreClosedError,
  DbTimeoutError,
});
