import * as mod from '../../src/client/boardQuery.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/client/boardQuery.ts', import.meta.url), mod);
