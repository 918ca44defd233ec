import * as mod from '../../../src/ui-server/inspector/safeJson.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/inspector/safeJson.ts', import.meta.url), mod);
