import * as mod from '../../../src/ui-server/inspector/inspectorOptions.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(
  new URL('../../../src/ui-server/inspector/inspectorOptions.ts', import.meta.url),
  mod,
);
