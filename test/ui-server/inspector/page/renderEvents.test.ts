import * as mod from '../../../../src/ui-server/inspector/page/renderEvents.js';
import { runDocExamples } from '../../../support/docExamples.js';

// eventRows draws DOM rows: the chromium test (inspector.test.ts) reads them.
runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/renderEvents.ts', import.meta.url),
  mod,
);
