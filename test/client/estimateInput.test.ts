import * as mod from '../../src/client/estimateInput.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/estimateInput.ts', import.meta.url), mod);
