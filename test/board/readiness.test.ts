import * as mod from '../../src/board/readiness.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/board/readiness.ts', import.meta.url), mod);
