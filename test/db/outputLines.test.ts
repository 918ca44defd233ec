import * as lines from '../../src/db/outputLines.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/db/outputLines.ts', import.meta.url), lines);
