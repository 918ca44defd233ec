import * as mod from '../../src/supervisor/treeReducer.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/treeReducer.ts', import.meta.url), mod);
