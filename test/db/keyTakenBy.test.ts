import * as mod from '../../src/db/keyTakenBy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/db/keyTakenBy.ts', import.meta.url), mod);
