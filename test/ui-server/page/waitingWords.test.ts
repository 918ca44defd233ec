import * as mod from '../../../src/ui-server/page/waitingWords.js';
import { runDocExamples } from '../../support/docExamples.js';

runDocExamples(new URL('../../../src/ui-server/page/waitingWords.ts', import.meta.url), mod);
