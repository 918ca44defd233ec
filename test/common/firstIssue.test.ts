import * as mod from '../../src/common/firstIssue.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/common/firstIssue.ts', import.meta.url), mod);
