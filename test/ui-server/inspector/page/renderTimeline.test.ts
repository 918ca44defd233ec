import * as mod from '../../../../src/ui-server/inspector/page/renderTimeline.js';
import { runDocExamples } from '../../../support/docExamples.js';

// timelineRows draws DOM rows: the chromium look test (inspectorLook.test.ts) filters them.
runDocExamples(
  new URL('../../../../src/ui-server/inspector/page/renderTimeline.ts', import.meta.url),
  mod,
);
