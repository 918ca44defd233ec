import * as mod from '../../src/ui-server/nodeHealth.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/ui-server/nodeHealth.ts', import.meta.url), mod);
