import * as mod from '../../src/cli/earlyLogFormat.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/cli/earlyLogFormat.ts', import.meta.url), mod);
