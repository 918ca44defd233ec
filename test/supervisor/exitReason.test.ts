import * as mod from '../../src/supervisor/exitReason.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/exitReason.ts', import.meta.url), mod);
