import * as mod from '../../src/supervisor/fromTemplate.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/fromTemplate.ts', import.meta.url), mod);
