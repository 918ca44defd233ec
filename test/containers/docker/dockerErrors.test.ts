import * as dockerErrors from '../../../src/containers/docker/dockerErrors.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/containers/docker/dockerErrors.ts', import.meta.url),
  dockerErrors,
);
