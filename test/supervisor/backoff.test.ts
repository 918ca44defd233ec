import * as mod from '../../src/supervisor/backoff.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/backoff.ts', import.meta.url), mod);
