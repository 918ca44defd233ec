import * as mod from '../../../src/ui-server/inspector/timeline.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/inspector/timeline.ts', import.meta.url), mod);
