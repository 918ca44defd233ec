import * as mod from '../../src/supervisor/restartPolicy.js';
import { runDocExamples } from '../support/docExamples.js';

runDocExamples(new URL('../../src/supervisor/restartPolicy.ts', import.meta.url), mod);
