import * as mod from '../../src/ui-server/htmlHeaders.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/htmlHeaders.ts', import.meta.url), mod);
